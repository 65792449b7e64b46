# SPDX-License-Identifier: BSD-3-Clause
"""Typed property values, as the C tool's ``--json`` writes them.

The table matches ``dc_codec_kinds`` in src/codec.c and the property types in
docs/dmaconn.schema.json (tests/json_schema_test.py checks all three): keys
listed here read as int, float or bool, ``None`` where the value is unknown or
does not read as its type; every other key (a user detector's included) stays
a string.
"""

import math
from typing import Any, Dict, Optional

JSON_VERSION = 1  # the "version" member of the document (docs/json-output.md)

PROPERTY_TYPES: Dict[str, type] = {
    **dict.fromkeys(
        (
            "nvml_index", "minor_number", "nvlink_active_links", "nvlink_switch_links", "clique_id",
            "numa_node", "kfd_node", "gfx_target_version", "partition", "partitions",
            "level_zero_driver", "level_zero_index", "tile", "tiles",
            "rank", "node", "local_ordinal",
            "nvlink_links", "nvlink_direct_links", "hops", "weight", "min_bandwidth_mbs", "max_bandwidth_mbs",
            "xgmi_links", "xelink_links", "mdfi_links",
            "performance_rank",  # dmaconn.verify()
        ),
        int,
    ),
    **dict.fromkeys(("nvlink_gbps", "xelink_gbps", "gbps", "latency_us"), float),
    **dict.fromkeys(("enabled", "coherent", "atomics_32", "atomics_64", "peer_dma"), bool),
    **dict.fromkeys(("can_access_peer", "access_supported", "native_atomics"), bool),  # dmaconn.verify()
}


def _is_c_int(text: str) -> bool:
    body = text[1:] if text[:1] in "+-" else text
    return body.isascii() and body.isdigit()


def typed_value(key: str, value: Optional[str]) -> Any:
    """A property's value with the type its key has in JSON."""
    kind = PROPERTY_TYPES.get(key)
    if kind is None or value is None:
        return value
    if kind is int:
        return int(value) if _is_c_int(value) and -(2**63) <= int(value) < 2**63 else None
    if kind is float:
        if not value or value[0].isspace() or value != value.strip():
            return None
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    if value in ("yes", "true", "1"):
        return True
    if value in ("no", "false", "0"):
        return False
    return None
