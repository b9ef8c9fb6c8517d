#!/bin/bash
# `build --in-place` against `struphy compile` on one installed Struphy, in one
# session: the same interpreter, Pyccel, language C, no OpenMP, two jobs.
#
#   python3 -m venv /tmp/sv && /tmp/sv/bin/pip install struphy==3.5.0 pyccel==2.2.3
#   bash bench/in_place_bench.sh /tmp/sv build/tools/cunumpy-kernels > in_place_bench.log
#
# Prints, for each tool, the wall time of a cold build (nothing compiled) and
# of five warm ones (nothing changed), with the load average before each.
# `struphy compile` also compiles its dependency feectools (19 modules).
set -euo pipefail
venv=$(realpath "$1")
tool=$(realpath "$2")
tree=$("$venv/bin/python" -c "import struphy, os; print(os.path.dirname(struphy.__file__))")
cache=$(mktemp -d)
export PATH="$venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
ours=(build --in-place --only host --language c --no-openmp --jobs 2 --python "$venv/bin/python" --cache-dir "$cache" "$tree")

timed() {  # label, command...
    local label=$1; shift
    echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
    local start=$EPOCHREALTIME
    "$@" > /dev/null 2>&1
    awk -v a="$start" -v b="$EPOCHREALTIME" -v l="$label" 'BEGIN { printf "%s: %.2f s\n", l, b - a }'
}

cd "$(mktemp -d)"
struphy compile --delete -y > /dev/null 2>&1 || true
timed "struphy compile, cold (168 builds)" struphy compile --language c -j 2 -y
for i in 1 2 3 4 5; do timed "struphy compile, warm" struphy compile --language c -j 2 -y; done
timed "cunumpy-kernels build --in-place over struphy compile's builds (149 foreign, kept)" "$tool" "${ours[@]}"
struphy compile --delete -y > /dev/null 2>&1
timed "cunumpy-kernels build --in-place, cold (149 builds)" "$tool" "${ours[@]}"
for i in 1 2 3 4 5; do timed "cunumpy-kernels build --in-place, warm" "$tool" "${ours[@]}"; done
rm -rf "$cache"
