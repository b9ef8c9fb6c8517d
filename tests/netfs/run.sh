#!/usr/bin/env bash
# The multi-node scenarios of a cache on a network file system (issue 45), on a real one: a GlusterFS
# volume on this machine, mounted three times over the loopback network, each mount a "node" with a
# host name of its own (UTS namespace): node-a and node-b with GlusterFS's default caches, node-c with
# long attribute, entry and negative caches, as an NFS client with long timeouts. Runs the scenarios of
# tests/netfs/scenarios.py (cold builders on two nodes, a killed and a paused lock holder, clean and prune
# during builds, a bundle rewritten while read), prints their figures and checks, exits 1 if a check
# failed. Needs root (mounts, namespaces, glusterd) and the glusterfs packages, so it is not part of
# the default test command. Usage: tests/netfs/run.sh --help.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cli=${CK_CLI:-cunumpy-kernels}
python_for_cli=${CK_PYTHON:-python3}
cuda_root=${CUDA_HOME:-/usr/local/cuda}
host=""
long_cache=60
keep=0
volume_options=()
scenario_args=()

usage() {
    cat <<EOF
usage: $0 [options]

  --cli PATH          the cunumpy-kernels to test (default: \$CK_CLI, else cunumpy-kernels on PATH)
  --python PY         --python given to the CLI (default: \$CK_PYTHON, else python3)
  --cuda-root DIR     the real CUDA toolkit (default: \$CUDA_HOME, else /usr/local/cuda)
  --builders N        builders a node in the build scenarios (default 4)
  --kernels N         kernels a tree (default 4)
  --readers N         bundle readers a node (default 2)
  --rewrites N        bundle rewrites (default 20)
  --lock-timeout S    CUNUMPY_KERNELS_LOCK_TIMEOUT of the lock breakers (default 5)
  --tries N           times a command that exits 75 is run again, a second apart (default 90)
  --long-cache S      node-c's attribute, entry and negative cache, seconds (default 60)
  --only A,B          scenarios: cold, cold-long, killed, paused, clean, clean-during, prune-during, bundle
  --volume-set K=V    a GlusterFS volume option (repeatable), e.g. performance.open-behind=off
  --host ADDR         the address the brick is served on; not loopback (default: first of hostname -I)
  --keep              keep the work folder (logs of every command) and print its path

Needs root, /dev/fuse, unshare, and glusterd, gluster and mount.glusterfs
(Debian: apt-get install glusterfs-server glusterfs-client).
EOF
}

while (($#)); do
    case $1 in
        --cli) cli=$2; shift 2 ;;
        --python) python_for_cli=$2; shift 2 ;;
        --cuda-root) cuda_root=$2; shift 2 ;;
        --builders | --kernels | --readers | --rewrites | --lock-timeout | --tries | --only) scenario_args+=("$1" "$2"); shift 2 ;;
        --volume-set) volume_options+=("$2"); shift 2 ;;
        --long-cache) long_cache=$2; shift 2 ;;
        --host) host=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "run.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

refuse() {
    echo "run.sh: $*" >&2
    exit 2
}

((EUID == 0)) || refuse "needs root: it starts glusterd, mounts a volume and makes namespaces (run it with sudo)"
for tool in glusterd gluster mount.glusterfs; do
    command -v "$tool" >/dev/null || refuse "$tool not found: install the glusterfs packages (Debian: apt-get install glusterfs-server glusterfs-client)"
done
for tool in unshare python3 mount umount; do
    command -v "$tool" >/dev/null || refuse "$tool not found"
done
[[ -e /dev/fuse ]] || refuse "/dev/fuse is missing: GlusterFS's client mounts need FUSE"
cli_path=$(command -v "$cli") || refuse "the CLI $cli is not found: give --cli PATH or CK_CLI"
python_path=$(command -v "$python_for_cli") || refuse "the Python $python_for_cli is not found: give --python PY"
[[ -x $cuda_root/bin/nvcc ]] || refuse "no nvcc in $cuda_root/bin: give --cuda-root DIR"
unshare --uts --mount true 2>/dev/null || refuse "unshare --uts --mount fails here: the nodes need UTS and mount namespaces"
if [[ -z $host ]]; then
    host=$(hostname -I 2>/dev/null | awk '{print $1}')
fi
[[ -n $host && $host != 127.* ]] || refuse "no address to serve the brick on (GlusterFS refuses loopback ones): give --host ADDR"

work=$(mktemp -d /tmp/ck-netfs.XXXXXX)
volume=cknetfs$$
started_glusterd=0
volume_made=0
mounts=()
scenarios_pid=""

cleanup() {
    local status=$?
    set +e
    if [[ -n $scenarios_pid ]] && kill -0 "$scenarios_pid" 2>/dev/null; then
        kill -TERM "$scenarios_pid"  # it ends the commands it started
        wait "$scenarios_pid"
    fi
    rm -f "$work/hold"
    for mount_point in "${mounts[@]}"; do
        umount "$mount_point" 2>/dev/null || umount -l "$mount_point"
    done
    if ((volume_made)); then
        gluster --mode=script volume stop "$volume" force >/dev/null
        gluster --mode=script volume delete "$volume" >/dev/null
    fi
    if ((started_glusterd)) && [[ -s $work/glusterd.pid ]]; then
        kill "$(cat "$work/glusterd.pid")"
    fi
    if ((keep)); then
        echo "run.sh: work folder (logs of every command) kept: $work" >&2
    else
        rm -rf "$work"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if ! gluster --mode=script volume list >/dev/null 2>&1; then
    glusterd -p "$work/glusterd.pid" --log-file="$work/glusterd.log"
    started_glusterd=1
    for _ in $(seq 100); do
        gluster --mode=script volume list >/dev/null 2>&1 && break
        sleep 0.2
    done
fi
mkdir -p "$work/brick" "$work/shared"
# force: the brick is a folder of the root file system, which GlusterFS otherwise refuses.
gluster --mode=script volume create "$volume" "$host:$work/brick" force >/dev/null
volume_made=1
for option in "${volume_options[@]}"; do
    gluster --mode=script volume set "$volume" "${option%%=*}" "${option#*=}" >/dev/null
done
gluster --mode=script volume start "$volume" >/dev/null
declare -A options=(
    [a]=""
    [b]=""
    [c]="attribute-timeout=$long_cache,entry-timeout=$long_cache,negative-timeout=$long_cache"
)
for node in a b c; do
    mkdir -p "$work/mnt/$node"
    mount -t glusterfs ${options[$node]:+-o "${options[$node]}"} "$host:/$volume" "$work/mnt/$node"
    mounts+=("$work/mnt/$node")
done

gluster_version=$(glusterfs --version | head -n 1)
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -srm), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "   $gluster_version; volume $volume, one brick $host:$work/brick; options set: ${volume_options[*]:-none, GlusterFS defaults}"
echo "   node-a, node-b: default client caches; node-c: attribute, entry and negative caches $long_cache s"
echo "   CLI $cli_path ($("$cli_path" --version 2>&1 | head -n 1))"

python3 "$here/scenarios.py" --cli "$cli_path" --python "$python_path" --cuda-root "$cuda_root" \
    --work "$work" --shared "$work/shared" --brick "$work/brick" \
    --mount "node-a=$work/mnt/a" --mount "node-b=$work/mnt/b" --mount "node-c=$work/mnt/c" \
    "${scenario_args[@]}" &
# In the background and waited for, so that a signal reaches the cleanup at once.
scenarios_pid=$!
wait "$scenarios_pid"
