#!/usr/bin/env bash
# Draws every package's preview.png with FaceRelay itself: each sticker, every item shown at once,
# on a real face photo (Tests/Fixtures/portraits.py's portrait of scikit-image's astronaut.png).
#   Stickers/make-previews.sh        (after swift build; FACERELAY_BIN overrides the binary)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
facerelay=${FACERELAY_BIN:-$root/.build/debug/facerelay}
[ -x "$facerelay" ] || { echo "build first: swift build" >&2; exit 1; }
fixtures=${FACERELAY_FIXTURES:-$root/.build/test-fixtures}
"$root/Tests/Fixtures/make-fixtures.sh" "$fixtures" > /dev/null
/usr/bin/python3 "$root/Tests/Fixtures/portraits.py" "$fixtures/astronaut.png" "$fixtures"
for folder in "$root"/Stickers/*/; do
  folder=${folder%/}
  name=$(basename "$folder")
  "$facerelay" inspect "$fixtures/portrait_preview.png" --sticker "$name" --show-all --min-face-size 80 --annotate "$folder/preview.png" 2> /dev/null
  echo "drew $folder/preview.png"
done
# The studio's built-in portrait (the same public-domain photo, 640x640) and its 68 landmarks as
# FaceRelay's tracker finds them: where the studio places a sticker when no stream is chosen.
/usr/bin/python3 -c "from PIL import Image; Image.open('$fixtures/portrait.png').convert('RGB').save('$root/Stickers/studio-portrait.jpg', quality=88)"
"$facerelay" inspect "$fixtures/portrait.png" --json 2> /dev/null | head -n 1 \
  | jq -c '{width: 640, height: 640, landmarks: .faces[0].landmarks}' > "$root/Stickers/studio-portrait.json"
echo "drew $root/Stickers/studio-portrait.jpg and its landmarks"
