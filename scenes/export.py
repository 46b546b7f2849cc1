"""Write a scene as MJCF so it opens in MuJoCo's own viewer::

    python -m traction.scenes.export truck_6x6 rough_hill --out model.xml [--seed 3]
        [--knob difficulty=0.8]
"""

from __future__ import annotations

import argparse
import ast
import struct
import zlib
from pathlib import Path

import mujoco
import numpy as np

from traction.vehicle_model import load_vehicle

from .build import TERRAINS, build_spec

#: Words YAML 1.1 (PyYAML, which reads the hyperparameter files) reads as booleans and null.
YAML_WORDS = {"~": None, **{spelling: value for word, value in (
    ("true", True), ("yes", True), ("on", True), ("false", False), ("no", False), ("off", False),
    ("null", None)) for spelling in (word, word.capitalize(), word.upper())}}


def parse_assignment(text: str) -> tuple[str, object]:
    """``NAME=VALUE`` from a command line, VALUE read as in the YAML files of hyperparameters.

    ``true``/``false``/``yes``/``no``/``on``/``off`` (lower, Capitalised or UPPER case, as
    YAML 1.1 reads them) are booleans and ``null``/``~`` is None; otherwise VALUE is a Python
    literal when it is one (numbers, ``1e-4``, ``True``, ``None``, lists, quoted text), else text.

    Raises:
        argparse.ArgumentTypeError: not ``NAME=VALUE``.
    """
    key, sep, value = text.partition("=")
    if not key or not sep or not value:
        raise argparse.ArgumentTypeError(f"{text!r}: use NAME=VALUE")
    if value in YAML_WORDS:
        return key, YAML_WORDS[value]
    try:
        return key, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key, value


def png_bytes(texels: np.ndarray) -> bytes:
    """``texels`` (``(height, width, 3)`` uint8) as a PNG file's bytes (8-bit RGB, no filter)."""
    height, width, _ = texels.shape
    rows = b"".join(b"\x00" + texels[r].tobytes() for r in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                              0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))


def main(argv=None) -> Path:
    ap = argparse.ArgumentParser(description="Write a Traction scene as MJCF XML.")
    ap.add_argument("vehicle", help="preset name or vehicle TOML path")
    ap.add_argument("terrain", choices=TERRAINS)
    ap.add_argument("--out", type=Path, required=True, help="XML file to write")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--physics-dt", type=float, default=0.002)
    ap.add_argument("--knob", type=parse_assignment, action="append", default=[],
                    help="terrain knob NAME=VALUE (repeatable)")
    args = ap.parse_args(argv)
    if args.out.is_dir():
        ap.error(f"--out {args.out}: is a folder; allowed: an XML file path")
    try:                                   # VehicleConfigError is a ValueError
        spec, _ = build_spec(load_vehicle(args.vehicle), args.terrain, args.seed,
                             args.physics_dt, **dict(args.knob))
    except ValueError as e:
        ap.error(str(e))
    spec.compile()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    spec.modelfiledir = str(args.out.parent.resolve())    # (where the PNG names resolve)
    assets = {}
    for texture in spec.textures:        # MJCF holds no texture data: a PNG beside the XML
        if len(texture.data):
            png = args.out.with_name(f"{args.out.stem}_{texture.name}.png")
            texels = np.frombuffer(bytes(texture.data), np.uint8).reshape(
                texture.height, texture.width, texture.nchannel)
            assets[png.name] = png_bytes(texels)
            png.write_bytes(assets[png.name])
            texture.data, texture.file = b"", png.name
            texture.width = texture.height = 0
    args.out.write_text(spec.to_xml())
    # it must load back (the PNGs given as they were written: MuJoCo caches files by path, so
    # a second export to the same path would read the first one's)
    mujoco.MjModel.from_xml_string(args.out.read_text(), assets)
    print(args.out)
    return args.out


if __name__ == "__main__":
    main()
