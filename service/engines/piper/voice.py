"""A Piper voice: a loaded model (model.py) with its calibration, behind the engine interface."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..engine import Calibrated, VoiceInfo, VoiceRequest
from ..runtime import OrtSettings
from .calibration import PiperCalibration, calibrate
from .model import PiperModel, PiperParams
from .schedule import VocoderSchedule
from .segment import PiperSegment
from .split_cache import SplitCache
from .stages import StageWork


class PiperVoice(Calibrated):
    """A calibrated Piper voice behind the engine interface (engine.Voice)."""

    calibration: PiperCalibration

    def __init__(
        self,
        model: PiperModel,
        calibration: PiperCalibration,
        schedule: VocoderSchedule | None = None,
    ) -> None:
        self.model = model
        self.calibration = calibration
        self.schedule = schedule or VocoderSchedule()
        """The vocoder's window sizes."""

    @classmethod
    def load(
        cls,
        info: VoiceInfo,
        config: dict[str, Any],
        cache: SplitCache,
        ort_settings: OrtSettings,
    ) -> PiperVoice:
        """Split (or read the split from the cache), load and calibrate; blocking, seconds."""
        model = PiperModel(info, config, cache.load(info.files[0]), ort_settings)
        return cls(model, calibrate(model))

    @property
    def info(self) -> VoiceInfo:
        return self.model.info

    @property
    def long_jobs(self) -> bool:
        return False

    @property
    def first_clause_chars(self) -> int:
        return 0  # "Sure," alone is as clear as in its sentence

    @property
    def hop(self) -> int:
        return self.model.hop

    def no_reading(self, text: str) -> str | None:
        return None  # espeak-ng reads any character, even if only as its name

    def params(self, request: VoiceRequest) -> PiperParams:
        return self.model.params(request)

    def segment(
        self, text: str, params: object, *, word_timestamps: bool, long_first: bool = False
    ) -> PiperSegment:
        assert isinstance(params, PiperParams), params
        schedule = self.schedule
        if long_first:
            schedule = replace(schedule, first=min(schedule.largest, 2 * schedule.first))
        calibration = self.calibration
        return PiperSegment(
            self.model,
            calibration.margins,
            calibration.costs,
            schedule,
            text,
            params,
            word_timestamps,
        )

    def stage_work(self) -> list[StageWork]:
        """What each stage has run so far, the flow's first, the vocoder's last."""
        return self.model.stages.work()
