"""A Piper voice's .onnx.json: what ListVoices says of it and what the model needs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ...errors import ModelError
from ..engine import VoiceInfo

FAMILY = "piper"
_SUBTAG = re.compile(r"[A-Za-z0-9]{1,8}")


def bcp47(code: str) -> str:
    """A locale as Piper and espeak write it (en_US, en-us, cmn) in BCP-47 form (en-US, cmn);
    "" when it is not one."""
    parts = code.replace("_", "-").split("-")
    if not code or not all(_SUBTAG.fullmatch(p) for p in parts):
        return ""
    out = [parts[0].lower()]
    for part in parts[1:]:
        if len(part) == 4 and part.isalpha():
            out.append(part.title())  # a script: Latn, Hans
        elif len(part) == 2 or (len(part) == 3 and part.isdigit()):
            out.append(part.upper())  # a region: US, 419
        else:
            out.append(part.lower())
    return "-".join(out)


def read_voice_info(
    model_path: Path, config_path: Path | None = None
) -> tuple[VoiceInfo, dict[str, Any]]:
    """Read and check a voice's .onnx.json; the name is the model file's stem."""
    config_path = config_path or model_path.with_name(model_path.name + ".json")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ModelError(config_path, f"cannot read the voice config ({exc.strerror})") from exc
    except ValueError as exc:
        raise ModelError(config_path, f"the voice config is not valid JSON ({exc})") from exc
    if not isinstance(config, dict):
        raise ModelError(config_path, "the voice config is not a JSON object")
    missing = [k for k in ("audio", "num_speakers", "phoneme_id_map") if k not in config]
    if missing:
        raise ModelError(config_path, f"not a Piper voice config: missing {', '.join(missing)}")
    try:
        rate = config["audio"]["sample_rate"]
        speaker_map = config.get("speaker_id_map") or {}
        speakers = tuple(sorted(speaker_map, key=lambda s: speaker_map[s]))
        language = config.get("language", {}).get("code") or config.get("espeak", {}).get(
            "voice", ""
        )
        quality = str(config["audio"].get("quality", ""))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ModelError(config_path, f"not a Piper voice config ({exc!r})") from exc
    if isinstance(rate, bool) or not isinstance(rate, int) or not 1000 <= rate <= 192000:
        raise ModelError(
            config_path, f"audio.sample_rate {rate!r} is not a sample rate in Hz (1000 to 192000)"
        )
    name = model_path.name.removesuffix(".onnx")
    info = VoiceInfo(
        name=name,
        language=bcp47(str(language)),
        native_rate=rate,
        family=FAMILY,
        speakers=speakers,
        quality=quality,
        files=(model_path, config_path),
    )
    return info, config
