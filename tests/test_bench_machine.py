"""The machine line every benchmark prints: enough to tell apart CPUs whose Kokoro figures
differ (docs/benchmarks.md#machines)."""

from __future__ import annotations

from pathlib import Path

from bench._common import cpu


def _cpuinfo(tmp_path: Path, family: int, flags: str) -> Path:
    path = tmp_path / f"cpuinfo-{family}"
    path.write_text(
        "processor\t: 0\nvendor_id\t: AuthenticAMD\n"
        f"cpu family\t: {family}\nmodel\t\t: 2\nmodel name\t: AMD EPYC\n"
        f"flags\t\t: fpu sse2 avx2 {flags}\n\nprocessor\t: 1\ncpu family\t: {family}\n"
    )
    return path


def test_two_cpus_a_virtual_machine_names_alike_are_told_apart(tmp_path: Path) -> None:
    """Bug: a virtual machine's "AMD EPYC" was all the line said, so figures from a Zen 4 and a
    Zen 5 host (whose 8-bit products run at different speeds) read as one machine's."""
    zen4 = cpu(_cpuinfo(tmp_path, 25, "avx512_vnni"))
    zen5 = cpu(_cpuinfo(tmp_path, 26, "avx512_vnni avx_vnni"))
    assert zen4 == "AMD EPYC (family 25 model 2; avx512_vnni)"
    assert zen5 == "AMD EPYC (family 26 model 2; avx512_vnni, avx_vnni)"


def test_a_cpu_without_8_bit_product_instructions_says_so(tmp_path: Path) -> None:
    assert cpu(_cpuinfo(tmp_path, 23, "")).endswith("(family 23 model 2; no VNNI or AMX)")
