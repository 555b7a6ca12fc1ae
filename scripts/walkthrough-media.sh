#!/usr/bin/env bash
# Crops the screenshots the UI tests save (docs/images/*.png, copied from test-output/screenshots/) into the images
# of the Get Started walkthrough (media/walkthrough/*.png, packaged in the .vsix). Run after refreshing docs/images.
# Needs ImageMagick (CONVERT=/path/to/convert). Geometry: WIDTHxHEIGHT+X+Y in the 1440×900 screenshots.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CONVERT=${CONVERT:-convert}   # ImageMagick 6 (convert) or 7 (magick)
command -v "$CONVERT" >/dev/null || { echo "walkthrough-media: ImageMagick is needed (set CONVERT to its convert)"; exit 1; }
crop() { "$CONVERT" "docs/images/$1.png" -crop "$2" +repage -strip "media/walkthrough/$3.png"; }
mkdir -p media/walkthrough
crop welcome-go     620x172+50+244  connect        # the welcome before connecting: Connect to Cluster, Start Local Control Plane
crop resources      556x573+50+37   views          # Resources and Work Queue: keys, queue state, why queued
crop dry-run        958x663+352+37  dry-run        # a dry-run's planned writes and their diffs
crop event-log      1088x493+352+37 event-log      # the Event Log after one step
crop go-controller  596x643+50+37   go-controller  # a Go controller's keys and why each was queued
crop checks         1088x623+352+37 checks         # a robustness check's finding
