"""Air-gap guarantee: the package never reaches a model hub.

Set before transformers or vLLM is imported, so neither tries the network; a user who really
wants the hub must unset them in their own process, on purpose. The `murgat` command calls
`enforce()` when it runs; importing the package does not, so code that builds engines itself
(tests, benchmarks) calls it first.
"""

import os

OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
}


# Defaults an air-gapped box wants but a user may override: vLLM finds "its own address" by
# connecting a UDP socket to 8.8.8.8 unless told (vllm.utils.network_utils.get_ip); a single
# box needs none but loopback. A multi-node deployment sets its real address instead.
LOCAL_DEFAULTS = {"VLLM_HOST_IP": "127.0.0.1"}


def enforce() -> None:
    for key, value in OFFLINE_ENV.items():
        os.environ[key] = value
    for key, value in LOCAL_DEFAULTS.items():
        os.environ.setdefault(key, value)
