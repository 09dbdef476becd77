#!/usr/bin/env bash
# Builds the fake libnvidia-ml.so.1 and its older-driver variants against NVIDIA's nvml.h.
# Usage: build-fake.sh <nvml include dir> <output dir>   (run by the agent module's Maven build)
set -euo pipefail
inc="$1"
out="$2"
src="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/fake_nvml.c"
if [ ! -f "$inc/nvml.h" ]; then
  echo "fake-nvml: NVIDIA's nvml.h not found in $inc - run .ci/install-deps first (it unpacks libnvidia-ml-dev into build-deps/nvml)" >&2
  exit 1
fi
command -v gcc >/dev/null || { echo "fake-nvml: gcc not found - run .ci/install-deps first" >&2; exit 1; }
# variant directory : extra flags (see the header comment of fake_nvml.c)
variants=(". :" "r535 :-DFAKE_STRIDE32" "v2procs :-DFAKE_NO_V3_PROCS" "legacy :-DFAKE_LEGACY")
for v in "${variants[@]}"; do
  dir="${v%% :*}"
  flags="${v#*:}"
  mkdir -p "$out/$dir"
  target="$out/$dir/libnvidia-ml.so.1"
  if [ "$target" -nt "$src" ] && [ "$target" -nt "${BASH_SOURCE[0]}" ]; then continue; fi
  # -fvisibility=hidden + -Bsymbolic: several variants live in one test JVM; each must keep its own state.
  gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Wno-unused-parameter -fPIC -shared -fvisibility=hidden \
      -Wl,-Bsymbolic -Wl,-soname,libnvidia-ml.so.1 -I"$inc" $flags -o "$target.tmp" "$src" -lpthread
  mv "$target.tmp" "$target"
done
