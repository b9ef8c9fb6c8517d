#!/usr/bin/env bash
# The proof of `build --cupy-cache` on a GPU machine, from a folder made by
# tests/gpu/pack.sh: cunumpy's own first calls find every kernel in CuPy's
# cache and compile nothing (cupy_cache_proof.py counts), for a cache filled
# (A) on the machine without a GPU that ran pack.sh, then copied, and (B) here
# with no GPU visible; against (C) a cold cache. Output to $OUT/cupy-proof.log.
set -u
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
out=${OUT:-/tmp}
work=$(mktemp -d)
export HOME="$work/home"
mkdir -p "$HOME"
# The paths pack.sh filled cache A with: CuPy's key holds every -I folder.
proof=/tmp/ckproof
rm -rf "$proof" && mkdir -p "$proof/site"
for w in "$here"/wheels/*.whl; do python3 -m zipfile -e "$w" "$proof/site"; done
mkdir -p "$proof/struphy-root" && tar xzf "$here/struphy-kernels.tgz" -C "$proof/struphy-root"
cp -r "$here/src-root/share/examples/particles/src" "$proof/particles-src"
export PYTHONPATH="$proof/site"
ck="$here/bin/cunumpy-kernels"
examples="$proof/particles-src"
struphy="$proof/struphy-root"
{
  echo "== machine"
  nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
  python3 -c "import sys, cupy; print(sys.version.split()[0], 'CuPy', cupy.__version__, 'NVRTC', cupy.cuda.nvrtc.getVersion())"
  for cache in A B; do
    dir="$work/cupy-$cache"
    if [ $cache = A ]; then
      echo "== A: CuPy's cache filled on the machine without a GPU (pack.sh), copied here"
      tar xzf "$here/cupy-here.tgz" -C "$work" && mv "$work/cupy-here" "$dir"
    else
      echo "== B: CuPy's cache filled here by build --only cupy with no GPU visible (CUDA_VISIBLE_DEVICES=)"
      for tree in "$examples/particles" "$struphy/struphy"; do
        CUDA_VISIBLE_DEVICES= "$ck" build --only cupy --jobs 16 --arch sm_90 --no-ptx --python python3 \
          --cupy-cache-dir "$dir" --json "$tree" > "$work/fill.json"
        echo "build exit status $?"
        python3 -c "import json,sys; r=json.load(open(sys.argv[1])); j=[x for x in r['jobs'] if x['kind']=='cupy']; \
print(r['cupy'], round(r['seconds'], 1), 's,', len(j), 'jobs', {s: sum(x['state']==s for x in j) for s in ('built','hit','failed')}, \
'compile seconds:', sorted(round(x['seconds'],2) for x in j))" "$work/fill.json"
      done
    fi
    echo "-- status --only cupy, read here"
    "$ck" status --only cupy --arch sm_90 --no-ptx --python python3 --cupy-cache-dir "$dir" "$examples/particles" \
      "$struphy/struphy" | grep -o -E "cupy:sm_90|built|missing|unknown" | sort | uniq -c
    echo "-- the example through cunumpy's KernelCatalog, in a fresh process"
    CUPY_CACHE_DIR="$dir" python3 "$here/cupy_cache_proof.py" example "$examples"
    echo "-- Struphy's CUDA kernels, CudaKernel.compile() as from_folder makes them"
    CUPY_CACHE_DIR="$dir" python3 "$here/cupy_cache_proof.py" compile "$struphy"
  done
  echo "== C: a cold CuPy cache"
  CUPY_CACHE_DIR="$work/cold" python3 "$here/cupy_cache_proof.py" example "$examples"
  CUPY_CACHE_DIR="$work/cold" python3 "$here/cupy_cache_proof.py" compile "$struphy"
} 2>&1 | tee "$out/cupy-proof.log"
