# Writes test/fixtures/casefold-ascii.json: for every code point Python's
# unicodedata knows, the ASCII letters and digits left after NFKC, full case
# folding (str.casefold), NFKC again and keeping letters and digits. The
# secret-kind check (src/model/bootstrap-text.ts) must agree with it.
import json
import unicodedata

out, assigned, start = [], [], None
for cp in range(0x110000):
    known = not (0xD800 <= cp <= 0xDFFF) and unicodedata.category(chr(cp)) != 'Cn'
    if known and start is None:
        start = cp
    if not known and start is not None:
        assigned.append([start, cp - 1])
        start = None
    if not known:
        continue
    folded = unicodedata.normalize('NFKC', unicodedata.normalize('NFKC', chr(cp)).casefold())
    ascii_part = ''.join(c for c in folded if c.isalnum() and c.isascii())
    if ascii_part:
        out.append([cp, ascii_part])
if start is not None:
    assigned.append([start, 0x10FFFF])
source = 'Python unicodedata ' + unicodedata.unidata_version + ': NFKC, casefold, NFKC, letters and digits; the ASCII letters and digits that remain, for every assigned code point that keeps any'
json.dump({'source': source, 'unicode': unicodedata.unidata_version, 'assigned': assigned, 'ascii': out}, open('test/fixtures/casefold-ascii.json', 'w'), separators=(',', ':'))
