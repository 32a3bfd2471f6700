#!/usr/bin/env bash
# The C extensions under AddressSanitizer and UndefinedBehaviorSanitizer (`make sanitize`).
#
#   tests/fuzz/sanitize.sh PYTHON [EXAMPLES] [SOURCE] [CODEX_SOURCE] [COPILOT_SOURCE]
#
# Builds SOURCE (default cc_analytics/frames/claude/_skim.c), CODEX_SOURCE (default
# cc_analytics/frames/codex/_scan.c) and COPILOT_SOURCE (default
# cc_analytics/frames/copilot/_events.c) with both sanitizers in a temporary folder, so the package's
# own build is untouched, then loads those builds in place of the installed ones and runs, under
# the sanitizers' runtime:
#   1. the fuzz targets that reach the extensions (frames.claude.skim, frames.claude.columns,
#      frames.codex.scan, frames.copilot.events): their seeds (the fuzz corpus, deep lines at a file's head included),
#      then EXAMPLES generated inputs;
#   2. the extensions' own tests (tests/frames/test_claude_skim.py, test_claude_columns.py,
#      test_codex_scan.py, test_copilot_events.py, test_copilot_tally.py).
# Any sanitizer report stops the run at once with a non-zero status (halt_on_error), and so does
# any fuzz finding or failed test.
set -euo pipefail
cd "$(dirname "$0")/../.."

py=${1:?"usage: tests/fuzz/sanitize.sh PYTHON [EXAMPLES] [SOURCE]"}
examples=${2:-500}
source=${3:-cc_analytics/frames/claude/_skim.c}
codex_source=${4:-cc_analytics/frames/codex/_scan.c}
copilot_source=${5:-cc_analytics/frames/copilot/_events.c}
cc=${CC:-gcc}

if ! command -v "$cc" >/dev/null 2>&1; then
  echo "sanitize: no C compiler ($cc); install gcc (apt-get install gcc) or set CC" >&2
  exit 1
fi
runtime=$("$cc" -print-file-name=libasan.so)
if [ ! -e "$runtime" ]; then
  echo "sanitize: $cc has no AddressSanitizer runtime (libasan.so); install it (apt-get install libasan8)" >&2
  exit 1
fi

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
suffix=$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
include=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
extension="$build/_skim$suffix"
codex_extension="$build/_scan$suffix"
copilot_extension="$build/_events$suffix"
# Without Python's own -fwrapv: signed overflow stays undefined, so UBSan reports it.
for pair in "$source:$extension" "$codex_source:$codex_extension" "$copilot_source:$copilot_extension"; do
  "$cc" -shared -fPIC -std=c99 -O1 -g -Wall -Wextra -Werror \
    -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
    -I"$include" "${pair%%:*}" -o "${pair#*:}"
done

# libasan must come first in the process (CPython is not built with it); CPython's own leaks at
# exit are not ours (detect_leaks=0); PYTHONMALLOC=malloc sends PyMem_* through the sanitizer's
# malloc, so the columns' and scratch buffers are checked too.
export LD_PRELOAD="$runtime"
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export PYTHONMALLOC=malloc
export PYTHONFAULTHANDLER=1
unset CC_ANALYTICS_PURE_PYTHON

"$py" tests/fuzz/run_long.py frames.claude.skim frames.claude.columns frames.codex.scan frames.copilot.events \
  --examples "$examples" --extension "$extension" --codex-extension "$codex_extension" \
  --copilot-extension "$copilot_extension"
"$py" - "$extension" "$codex_extension" "$copilot_extension" <<'EOF'
import sys
from pathlib import Path

from tests.fuzz.extension import load_codex_extension, load_copilot_extension, load_extension

load_extension(Path(sys.argv[1]))
load_codex_extension(Path(sys.argv[2]))
load_copilot_extension(Path(sys.argv[3]))
import pytest  # noqa: E402

tests = ["tests/frames/test_claude_skim.py", "tests/frames/test_claude_columns.py", "tests/frames/test_codex_scan.py",
         "tests/frames/test_copilot_events.py", "tests/frames/test_copilot_tally.py"]
sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", *tests]))
EOF
echo "sanitize: no AddressSanitizer or UndefinedBehaviorSanitizer report"
