"""Tags a built wheel (py3-none-linux_x86_64) with the manylinux policy auditwheel finds for it.

    python scripts/wheel_tag.py WHEEL OUTDIR     prints the tagged wheel's path

auditwheel repairs only platlib wheels, and this one keeps its library in purelib (a py3-none wheel,
for any Python 3): so auditwheel judges a platlib copy, and the wheel itself is retagged with its
verdict. It must report nothing to bundle: the tool and the library link only the C and C++ runtimes.
"""

import base64
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path


def platlib_copy(wheel: Path, directory: Path) -> Path:
    copy = directory / wheel.name
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(copy, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item)
            name = re.sub(r"^[^/]+\.data/purelib/", "", item.filename)
            if name.endswith(".dist-info/RECORD"):
                data = re.sub(rb"(?m)^[^/\n]+\.data/purelib/", b"", data)
            if name.endswith(".dist-info/WHEEL"):
                data = data.replace(b"Root-Is-Purelib: true", b"Root-Is-Purelib: false")
            info = zipfile.ZipInfo(name, item.date_time)
            info.external_attr = item.external_attr
            target.writestr(info, data)
    return copy


def policy(wheel: Path) -> str:
    with tempfile.TemporaryDirectory() as directory:
        shown = subprocess.run([sys.executable, "-m", "auditwheel", "show", platlib_copy(wheel, Path(directory))],
                               capture_output=True, text=True, check=True).stdout
    if "external shared libraries" in shown and "following external shared" in shown:
        sys.exit(f"{wheel.name} needs shared libraries outside the C and C++ runtimes:\n{shown}")
    return re.search(r'"(manylinux_\d+_\d+_x86_64)"', shown).group(1)


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def retag(wheel: Path, platform: str, out: Path) -> Path:
    tagged = out / wheel.name.replace("-linux_x86_64.whl", f"-{platform}.whl")
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(tagged, "w", zipfile.ZIP_DEFLATED) as target:
        records = []
        for item in source.infolist():
            if item.filename.endswith(".dist-info/RECORD"):
                record_name = item.filename
                continue
            data = source.read(item)
            if item.filename.endswith(".dist-info/WHEEL"):
                data = data.replace(b"-linux_x86_64", f"-{platform}".encode())
            target.writestr(item, data)
            records.append(record_line(item.filename, data))
        target.writestr(record_name, "\n".join(records + [f"{record_name},,"]) + "\n")
    return tagged


if __name__ == "__main__":
    raw, out = Path(sys.argv[1]), Path(sys.argv[2])
    print(retag(raw, policy(raw), out))
