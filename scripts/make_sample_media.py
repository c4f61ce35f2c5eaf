"""Write the bundled sample's videos (synthetic, known content) into a folder.

Usage: python scripts/make_sample_media.py [--out .local/sample_media]
"""

import argparse
import pathlib

from murgat_local.sample.media import build_sample_media

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path(".local/sample_media"))
    args = ap.parse_args()
    for name, path in build_sample_media(args.out).items():
        print(f"{name:12s} {path}")
