#!/usr/bin/env python3
"""Shrinks the docs' screenshots in place: each PNG to an optimised palette of 128 colours
(median cut, no dithering). The page's flat colours and text survive; the files ship in the
package (docs/images/), where full-colour screenshots cost about four times as much.

    /usr/bin/python3 tools/quantize_png.py docs/images/*.png    (npm run screenshots runs it)

Needs Debian's python3-pil (tools/bootstrap.sh installs it).
"""
import sys

from PIL import Image

for path in sys.argv[1:]:
    image = Image.open(path).convert('RGB')
    image.quantize(colors=128, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(path, optimize=True)
