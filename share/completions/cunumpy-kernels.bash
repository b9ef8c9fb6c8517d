# bash completion for cunumpy-kernels.
# Commands and flags are read from the program's own --help at completion
# time, so this file never falls behind the CLI; only flag values are listed here.

_cunumpy_kernels_help_words() {
  # $1: the program, then the command words; prints every flag and subcommand the help names.
  "$@" --help 2>/dev/null | awk '
    /^Subcommands:/ { sub_section = 1; next }
    /^[A-Za-z]/     { sub_section = 0 }
    sub_section && /^  [a-z]/ { print $1; next }
    /^ +-/ {
      n = split($1, parts, ",")
      for (i = 1; i <= n; i++) if (parts[i] ~ /^-/) print parts[i]
    }'
}

_cunumpy_kernels() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local program=${COMP_WORDS[0]} i word
  local -a command=()
  COMPREPLY=()

  case $prev in
    --only) mapfile -t COMPREPLY < <(compgen -W "host cuda cupy" -- "$cur"); return ;;
    --language) mapfile -t COMPREPLY < <(compgen -W "c fortran" -- "$cur"); return ;;
    --compiler) mapfile -t COMPREPLY < <(compgen -W "nvrtc nvcc" -- "$cur"); return ;;
    --color) mapfile -t COMPREPLY < <(compgen -W "auto always never" -- "$cur"); return ;;
    --format) mapfile -t COMPREPLY < <(compgen -W "text json github" -- "$cur"); return ;;
    --cache-dir | --cupy-cache-dir | --cuda-root | --cunumpy-include-dir | -I | --include-dir | --tree)
      mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return ;;
    -j | --jobs | --arch | --compiler-option | --cache-name | --host-suffix | --cuda-suffix | --max-age | --max-size)
      return ;;
  esac

  # The command words typed so far: `build`, or `cache verify`.
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    [[ $word == --color ]] && { ((i++)); continue; }
    [[ $word == -* ]] && continue
    if ((${#command[@]} == 0)) || [[ ${command[0]} == cache && ${#command[@]} == 1 ]]; then
      command+=("$word")
    fi
  done

  local words
  words=$(_cunumpy_kernels_help_words "$program" "${command[@]}")
  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(grep -- '^-' <<<"$words")" -- "$cur")
  elif ((${#command[@]} == 0)) || [[ ${command[*]} == cache ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(grep -v -- '^-' <<<"$words")" -- "$cur")
  else
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  fi
}

complete -o filenames -F _cunumpy_kernels cunumpy-kernels
