#!/usr/bin/env bash
# The engines' current parsers, runnable here without a GPU: vLLM 0.33.0 and SGLang 0.5.23
# installed with --no-deps into their own venv, plus only what their parser modules import;
# torch and CUDA are stood in by benches/engines/shims.py. Not a pyproject extra: with their
# dependencies the two cannot share one environment (vLLM wants openai>=2.25, SGLang openai==2.8.0;
# both want torch and CUDA kernels).
#
#   bash benches/engines/setup.sh            # -> .venv-engines (not committed)
#   .venv-engines/bin/python benches/bench_engines.py --table
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV=${VENV:-.venv-engines}
python3 -m venv "$VENV"
PIP="$VENV/bin/pip"
"$PIP" install -q --no-deps "vllm==0.33.0" "sglang==0.5.23" "xgrammar==0.2.8" "apache-tvm-ffi==0.1.11"
# What the parser modules and their imports need (found by importing them one by one).
"$PIP" install -q "regex" "cachetools" "psutil" "numpy" "pydantic>=2.12,<3" "openai>=2.25" \
    "partial-json-parser" "msgspec" "pyyaml" "typing_extensions" "cloudpickle" "orjson" "pybase64" \
    "transformers>=5.16.1,<5.21" "cbor2" "pyzmq" "urllib3" "aiohttp" "requests" "openai-harmony" \
    "fastapi" "pillow" "prometheus_client" "uvloop" "py-cpuinfo" "ijson" "mistral_common" \
    "pytest>=8,<10" "pytest-benchmark>=4,<6"
# agentmsg itself: the release wheel (build it once with `maturin build --release`).
WHEEL=$(ls -t target/wheels/agentmsg-*.whl 2>/dev/null | head -1 || true)
if [ -n "$WHEEL" ]; then
    "$PIP" install -q --no-deps --force-reinstall "$WHEEL" "tqdm>=4.60,<5"
else
    echo "no wheel in target/wheels: run 'maturin build --release', then this script again" >&2
fi
"$VENV/bin/python" -c "import sys; sys.path.insert(0, 'benches/engines'); import engines; engines.vllm_parser_class('hermes'); print('engines ready')"
