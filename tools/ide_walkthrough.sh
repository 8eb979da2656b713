#!/usr/bin/env bash
# A scripted walk-through of tessel-ide under a real X server (Xvfb), driven with xdotool like a
# user: the real program with its mouse and keyboard, no screenshot mode. For each screen size
# it opens GEMM (512^3 by default) with samples/gemm/schedules/tiled_staged.json on ascend-like,
# waits for the run to land, then clicks through the views and tabs, zooms the timeline and
# clicks a bar, pins the run as the baseline (Ctrl+B), edits a tile factor with the keyboard,
# shows the Baseline tab, undoes the edit, saves to the history, opens the File menu and quits,
# taking a screenshot of the whole screen after each step (docs/ide.md "Walk-through"):
#
#   docs/images/walkthrough/1280x800/NN-name.png, docs/images/walkthrough/1920x1080/NN-name.png
#
#   make ide-walkthrough              (builds tessel-ide first)
#   tools/ide_walkthrough.sh          (uses build/bin/tessel-ide as it is)
#
# Environment: TESSEL_IDE (the program), WALKTHROUGH_OUT (output folder), WALKTHROUGH_SIZES
# ("1280x800 1920x1080"), WALKTHROUGH_PARAMS (M=512,N=512,K=512), WALKTHROUGH_TIMEOUT (seconds to
# wait for a run, 180). Missing tools (Xvfb, xdotool, xwd, ImageMagick) are installed with
# apt-get. The IDE runs with its own XDG config/state/data folders and schedule database in a
# temporary folder, so the layout, autosave and history of the user are neither read nor
# touched and every run starts like a first start. Exits non-zero naming the step that failed
# (the window never appeared, the IDE died, a run never landed, an edit did not reach the
# schedule).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IDE=${TESSEL_IDE:-$ROOT/build/bin/tessel-ide}
OUT=${WALKTHROUGH_OUT:-$ROOT/docs/images/walkthrough}
SIZES=${WALKTHROUGH_SIZES:-"1280x800 1920x1080"}
PARAMS=${WALKTHROUGH_PARAMS:-M=512,N=512,K=512}
SCHEDULE=$ROOT/samples/gemm/schedules/tiled_staged.json
ARCH=ascend-like
TIMEOUT=${WALKTHROUGH_TIMEOUT:-180}
MAX_PNG_KB=300

say() { echo "walkthrough: $*"; }
die() {
    echo "walkthrough: FAILED${SIZE:+ at $SIZE}${STEP:+, step $STEP}: $*" >&2
    if [ -n "${IDE_LOG:-}" ] && [ -s "$IDE_LOG" ]; then
        echo "walkthrough: last lines of tessel-ide's output ($IDE_LOG):" >&2
        tail -15 "$IDE_LOG" >&2
    fi
    exit 1
}

# --- tools --------------------------------------------------------------------------------
need_packages() {
    local missing="" p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        local sudo=""
        [ "$(id -u)" = 0 ] || sudo=sudo
        say "installing missing packages:$missing"
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null &&
            $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null ||
            die "apt-get install$missing failed"
    fi
}
need_packages xvfb xdotool x11-apps imagemagick
CONVERT=/usr/bin/convert
[ -x "$CONVERT" ] || CONVERT=convert
for t in Xvfb xdotool import python3; do
    command -v "$t" >/dev/null || die "$t is not installed"
done
[ -x "$IDE" ] || die "$IDE is not built (make ide-walkthrough, or: cmake --build build --target tessel-ide)"
IDE=$(cd "$(dirname "$IDE")" && pwd)/$(basename "$IDE")

WORK=$(mktemp -d /tmp/tessel-walkthrough.XXXXXX)
XVFB_PID=""
IDE_PID=""
cleanup() {
    [ -n "$IDE_PID" ] && kill "$IDE_PID" 2>/dev/null || true
    [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# --- image analysis (PPM from ImageMagick; python3 without extra modules) -----------------
cat > "$WORK/img.py" <<'EOF'
import sys

def load(path):
    with open(path, "rb") as f:
        data = f.read()
    # P6 header: magic, width, height, maxval, one whitespace, then RGB bytes
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            while data[pos:pos + 1] not in (b"\n", b""):
                pos += 1
            continue
        start = pos
        while not data[pos:pos + 1].isspace():
            pos += 1
        fields.append(data[start:pos])
    assert fields[0] == b"P6" and fields[3] == b"255", "not an 8-bit binary PPM"
    w, h = int(fields[1]), int(fields[2])
    return w, h, data[pos + 1:]

def px(img, x, y):
    w, h, d = img
    i = 3 * (y * w + x)
    return d[i], d[i + 1], d[i + 2]

def saturated(c):
    return max(c) - min(c) >= 80

def region(img, args):
    w, h, _ = img
    x0, y0, x1, y1 = (int(a) for a in args)
    return max(0, x0), max(0, y0), min(w, x1), min(h, y1)

cmd, path = sys.argv[1], sys.argv[2]
img = load(path)
if cmd == "coloured":            # number of saturated pixels in a region (every 2nd pixel)
    x0, y0, x1, y1 = region(img, sys.argv[3:7])
    print(sum(1 for y in range(y0, y1, 2) for x in range(x0, x1, 2) if saturated(px(img, x, y))))
elif cmd == "distinct":          # number of distinct colours in a region (blank screen: 1)
    x0, y0, x1, y1 = region(img, sys.argv[3:7])
    print(len({px(img, x, y) for y in range(y0, y1, 3) for x in range(x0, x1, 3)}))
elif cmd == "bar":               # a point inside a bar: the middle of the longest solid run of
    x0, y0, x1, y1 = region(img, sys.argv[3:7])   # orange (matrix) pixels, else of any saturated
    def orange(c):                                 # colour (hatching and stalls make short runs)
        r, g, b = c
        return r > 180 and 90 < g < 190 and b < 90
    best = {True: (0, None), False: (0, None)}
    for y in range(y0 + 2, y1 - 2):
        x = x0
        while x < x1:
            c = px(img, x, y)
            if not saturated(c):
                x += 1
                continue
            end = x
            while end + 1 < x1 and px(img, end + 1, y) == c:
                end += 1
            mid = (x + end) // 2
            if all(px(img, mid, y + dy) == c for dy in (-2, -1, 1, 2)):
                kind = orange(c)
                if end - x + 1 > best[kind][0]:
                    best[kind] = (end - x + 1, (mid, y))
            x = end + 1
    point = best[True][1] or best[False][1]
    if point is None:
        sys.exit(1)
    print(point[0], point[1])
elif cmd == "digest":            # a hash of a region (did it change?)
    import hashlib
    x0, y0, x1, y1 = region(img, sys.argv[3:7])
    w = img[0]
    print(hashlib.md5(b"".join(img[2][3 * (y * w + x0):3 * (y * w + x1)] for y in range(y0, y1))).hexdigest())
elif cmd == "layout":            # the splitter handles of the main window, from the picture:
    wx, wy, ww, wh = (int(a) for a in sys.argv[3:7])  # wx wy ww wh -> shell assignments
    from collections import Counter
    # The window's own colour: the commonest one in the status bar.
    bg = Counter(px(img, x, y) for y in range(wy + wh - 8, wy + wh - 2)
                 for x in range(wx, wx + ww)).most_common(1)[0][0]
    top, bottom = wy + 62, wy + wh - 26  # below the menu and toolbar, above the status bar
    def runs(flags, lo):
        out, start = [], None
        for i, f in enumerate(flags + [False]):
            if f and start is None:
                start = i
            elif not f and start is not None:
                out.append((lo + start, lo + i - 1))
                start = None
        return out
    # A column handle: an x where (nearly) the whole height is the window colour (a splitter
    # handle has a few grip dots); the group boxes and views have frames and content.
    cols = [x for x in range(wx + 10, wx + ww - 10)]
    flags = [sum(1 for y in range(top, bottom) if px(img, x, y) != bg) <= 15 for x in cols]
    handles = [(a + b) // 2 for a, b in runs(flags, wx + 10)]
    print('XSPLIT="%s"' % " ".join(map(str, handles)))
    # A row handle in a column: one to three rows with only a few grip dots between rows of
    # the window colour.
    bounds = [wx] + handles + [wx + ww]
    for k in range(len(bounds) - 1):
        x0, x1 = bounds[k] + 4, bounds[k + 1] - 4
        counts = [sum(1 for x in range(x0, x1) if px(img, x, y) != bg) for y in range(top, bottom)]
        ys = []
        for a, b in runs([0 < c <= 30 for c in counts], 0):
            if b - a <= 2 and a > 0 and b + 1 < len(counts) and counts[a - 1] <= 3 and counts[b + 1] <= 3:
                ys.append(top + (a + b) // 2)
        print('YSPLIT%d="%s"' % (k, " ".join(map(str, ys))))
EOF
img() { python3 "$WORK/img.py" "$@"; }

# --- X and the IDE ------------------------------------------------------------------------
capture() { # capture FILE.ppm|FILE.png: the whole screen. ImageMagick's import: xwd -root shows
    # Qt's popup menus as black rectangles (it reads the root window's own pixels).
    if ! import -window root -depth 8 "$1" 2>> "$WORK/import.log"; then
        xwd -root -silent > "$WORK/shot.xwd" || die "neither import nor xwd could read the screen"
        "$CONVERT" "xwd:$WORK/shot.xwd" "$1" || die "convert could not write $1"
    fi
}

ide_alive() { [ -n "$IDE_PID" ] && kill -0 "$IDE_PID" 2>/dev/null; }
check_alive() {
    ide_alive || {
        local rc=0
        wait "$IDE_PID" || rc=$?
        IDE_PID=""
        die "tessel-ide is no longer running (exit status $rc)"
    }
}

# The run has landed when the timeline shows bars and the screen has stopped changing (the
# status bar's progress text refreshes every 250 ms while a run is in flight) for 3 s; with a
# second argument, also the status bar (its run summary) differs from that digest.
status_digest() { img digest "$1" $STATUSBAR; }
wait_landed() {
    local what=$1 status_before=${2:-} start=$SECONDS last="" same=0 n
    sleep 1
    while :; do
        check_alive
        capture "$WORK/poll.ppm"
        local sum
        sum=$(md5sum < "$WORK/poll.ppm")
        if [ "$sum" = "$last" ]; then same=$((same + 1)); else same=0; fi
        last=$sum
        if [ "$same" -ge 3 ]; then
            n=$(img coloured "$WORK/poll.ppm" $TIMELINE)
            if [ "$n" -ge 50 ] && { [ -z "$status_before" ] || [ "$(status_digest "$WORK/poll.ppm")" != "$status_before" ]; }; then
                return 0
            fi
        fi
        [ $((SECONDS - start)) -lt "$TIMEOUT" ] ||
            die "$what: no run landed within ${TIMEOUT}s (the timeline shows no bars or the screen keeps changing)"
        sleep 1
    done
}

autosave_field() { # the value of a field of the tile_C directive in the IDE's autosave
    python3 - "$XDG_STATE_HOME/tessel/ide-autosave.json" "$1" <<'EOF'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except Exception as e:
    print("unreadable:", e)
    sys.exit(0)
sched = j.get("schedule", j)
if isinstance(sched, str):  # the schedule JSON as a text
    sched = json.loads(sched)
for d in sched.get("directives", []):
    if d.get("id") == "tile_C":
        print(d.get(sys.argv[2]))
        break
else:
    print("no tile_C")
EOF
}

NN=0
shot() { # shot NAME: capture the screen as NN-NAME.png (quantised when large)
    check_alive
    sleep "${SETTLE:-1}"
    NN=$((NN + 1))
    local f
    f=$(printf '%s/%02d-%s.png' "$DIR" "$NN" "$1")
    capture "$f"
    if [ $(($(stat -c %s "$f") / 1024)) -gt $MAX_PNG_KB ]; then
        "$CONVERT" "$f" -colors 256 "PNG8:$f.tmp" && mv "$f.tmp" "$f"
    fi
    [ "$(img distinct <("$CONVERT" "$f" ppm:-) 0 0 $SW $SH)" -gt 20 ] || die "$f is blank"
    say "$SIZE $(basename "$f") ($(($(stat -c %s "$f") / 1024)) KB)"
}

click() { xdotool mousemove --sync "$1" "$2" click 1; sleep 0.4; }
key() { xdotool key --delay 80 "$@"; sleep 0.3; }

walk() {
    SIZE=$1
    SW=${SIZE%x*}
    SH=${SIZE#*x}
    DIR=$WORK/out/$SIZE # moved to $OUT/$SIZE once every step passed
    NN=0
    STEP="start Xvfb"
    mkdir -p "$DIR"
    local d=99
    while [ -e "/tmp/.X11-unix/X$d" ] || [ -e "/tmp/.X$d-lock" ]; do d=$((d + 1)); done
    export DISPLAY=:$d
    Xvfb "$DISPLAY" -screen 0 "${SW}x${SH}x24" -nolisten tcp > "$WORK/xvfb-$SIZE.log" 2>&1 &
    XVFB_PID=$!
    local i
    for i in $(seq 50); do
        xdotool getdisplaygeometry > /dev/null 2>&1 && break
        kill -0 "$XVFB_PID" 2>/dev/null || die "Xvfb exited: $(cat "$WORK/xvfb-$SIZE.log")"
        sleep 0.2
    done
    xdotool getdisplaygeometry > /dev/null 2>&1 || die "Xvfb on $DISPLAY did not come up"

    # A first start: fresh settings, autosave, history.
    export XDG_CONFIG_HOME=$WORK/$SIZE/config XDG_STATE_HOME=$WORK/$SIZE/state XDG_DATA_HOME=$WORK/$SIZE/data
    export TESSEL_DB=$WORK/$SIZE/tessel.db
    mkdir -p "$XDG_CONFIG_HOME" "$XDG_STATE_HOME" "$XDG_DATA_HOME"
    unset QT_QPA_PLATFORM
    STEP="start tessel-ide"
    IDE_LOG=$WORK/ide-$SIZE.log
    (cd "$ROOT" && exec "$IDE" --no-restore --open gemm --params "$PARAMS" --arch "$ARCH" --schedule "$SCHEDULE") \
        > "$IDE_LOG" 2>&1 &
    IDE_PID=$!
    local wid=""
    for i in $(seq 120); do
        check_alive
        wid=$(xdotool search --onlyvisible --name 'Tessel IDE' 2>/dev/null | head -1) || true
        [ -n "$wid" ] && break
        sleep 0.5
    done
    [ -n "$wid" ] || die "the tessel-ide window never appeared (60 s)"
    xdotool windowfocus --sync "$wid" 2>/dev/null || true
    eval "$(xdotool getwindowgeometry --shell "$wid")" # X Y WIDTH HEIGHT
    local wx=$X wy=$Y ww=$WIDTH wh=$HEIGHT
    say "$SIZE: window $wid at ${wx},${wy} ${ww}x${wh}"
    [ $((wx + ww)) -le "$SW" ] && [ $((wy + wh)) -le "$SH" ] ||
        say "$SIZE: note: the window (${ww}x${wh} at ${wx},${wy}) is larger than the screen"

    # Until the layout is known: the run has landed when the screen has stopped changing.
    TIMELINE="$wx $wy $((wx + ww)) $((wy + wh))"
    STATUSBAR="$wx $((wy + wh - 22)) $((wx + ww)) $((wy + wh))"
    STEP="wait for the first run"
    wait_landed "first run"

    # The layout from the picture (MainWindow: three splitter columns; left: schedule over
    # diagnostics, middle: timeline, lifetimes, tiling; right: metrics over the Code/History
    # tabs), between the menu + toolbar and the status bar.
    STEP="layout"
    local top=$((wy + 62)) bottom=$((wy + wh - 26))
    capture "$WORK/now.ppm"
    local XSPLIT YSPLIT0 YSPLIT1 YSPLIT2
    eval "$(img layout "$WORK/now.ppm" $wx $wy $ww $wh)"
    local c1 c2 lsplit m1 m2 rsplit
    read -r c1 c2 _ <<< "$XSPLIT "
    read -r lsplit _ <<< "$YSPLIT0 "
    read -r m1 m2 _ <<< "$YSPLIT1 "
    read -r rsplit _ <<< "$YSPLIT2 "
    if [ -z "$c2" ] || [ -z "$lsplit" ] || [ -z "$m2" ] || [ -z "$rsplit" ] ||
        [ "$(echo $XSPLIT | wc -w)$(echo $YSPLIT1 | wc -w)" != 22 ]; then
        say "$SIZE: note: splitters not found in the picture (columns: '$XSPLIT', rows: '$YSPLIT0' '$YSPLIT1' '$YSPLIT2'); using the default proportions"
        local ch=$((bottom - top))
        c1=$((wx + ww * 38 / 100)) c2=$((wx + ww * 63 / 100))
        lsplit=$((top + ch * 84 / 100)) m1=$((top + ch * 31 / 100)) m2=$((top + ch * 67 / 100))
        rsplit=$((top + ch * 72 / 100))
    fi
    say "$SIZE: columns at x=$c1,$c2; rows: left $lsplit, middle $m1,$m2, right $rsplit"
    local rx1=$((wx + ww))
    TIMELINE="$c1 $top $c2 $m1"
    wait_landed "first run (timeline)"
    shot loaded

    # Schedule editor: click into the directive table, select stage_A with the keyboard.
    STEP="editor"
    local tablex=$(((wx + c1) / 2)) tabley=$((top + (lsplit - top) * 30 / 100))
    click $tablex $tabley
    key ctrl+Home Down Down Down Down
    shot editor-stage_A
    STEP="editor JSON tab"
    key ctrl+Tab
    shot editor-json
    key ctrl+shift+Tab

    # Timeline: zoom in with the wheel about a point a third of the way in, then click a bar
    # (a matrix bar when there is one); the tooltip names it.
    STEP="timeline zoom"
    xdotool mousemove --sync $((c1 + (c2 - c1) * 30 / 100)) $(((top + m1) / 2))
    xdotool click --repeat 12 --delay 60 4
    shot timeline-zoom
    STEP="timeline bar"
    capture "$WORK/now.ppm"
    local bar
    bar=$(img bar "$WORK/now.ppm" $TIMELINE) || die "no bar found in the timeline ($TIMELINE)"
    say "$SIZE: timeline bar at $bar"
    click $bar
    sleep 0.3 # hover there (a move, then rest): the bar's tooltip
    xdotool mousemove_relative 1 0 sleep 0.2 mousemove_relative -- -1 0
    SETTLE=2.5 shot timeline-bar

    STEP="lifetimes"
    capture "$WORK/now.ppm"
    bar=$(img bar "$WORK/now.ppm" $c1 $m1 $c2 $m2) || bar="$(((c1 + c2) / 2)) $(((m1 + m2) / 2))"
    click $bar
    SETTLE=2 shot lifetimes

    STEP="tiling"
    click $((c1 + (c2 - c1) / 5)) $(((m2 + bottom) / 2 + 20))
    shot tiling

    STEP="metrics"
    click $(((c2 + rx1) / 2)) $((top + (rsplit - top) * 65 / 100))
    SETTLE=2 shot metrics-roofline

    # Code: click into the text, then Ctrl+Tab through Stmt, loop nest, NPU IR, assembly.
    STEP="code"
    click $(((c2 + rx1) / 2)) $((bottom - 45))
    shot code-stmt
    key ctrl+Tab
    shot code-loopnest
    key ctrl+Tab
    shot code-npuir
    key ctrl+Tab
    shot code-asm

    STEP="diagnostics"
    click $tablex $(((lsplit + bottom) / 2 + 10))
    shot diagnostics

    # Edit a tile factor with the keyboard: tile_C's fx 128 -> 64 in the argument table
    # (Tab from the directive table; "fx" finds the row; F2 edits, Ctrl+A, 64, Return).
    # Ctrl+B pins this run as the baseline the Baseline tab compares later runs with.
    STEP="pin baseline"
    key ctrl+b
    STEP="edit tile factor"
    capture "$WORK/now.ppm"
    local status
    status=$(status_digest "$WORK/now.ppm")
    click $tablex $tabley
    key ctrl+Home
    key Tab
    key ctrl+Home
    xdotool type --delay 60 fx
    sleep 0.5
    key Right F2 ctrl+a
    xdotool type --delay 60 64
    key Return
    sleep 1
    [ "$(autosave_field fx)" = 64 ] || die "the keyboard edit did not reach the schedule (autosave fx: $(autosave_field fx))"
    wait_landed "run after the edit" "$status"
    shot edit-fx-64

    # The third tab of the Code | History | Baseline tab bar: this run against the baseline.
    STEP="baseline tab"
    capture "$WORK/now.ppm"
    local before
    before=$(img digest "$WORK/now.ppm" $c2 $rsplit $rx1 $bottom)
    click $((c2 + 160)) $((rsplit + 16))
    capture "$WORK/now.ppm"
    [ "$(img digest "$WORK/now.ppm" $c2 $rsplit $rx1 $bottom)" != "$before" ] ||
        die "clicking the Baseline tab at $((c2 + 160)),$((rsplit + 16)) changed nothing"
    shot baseline

    STEP="undo"
    capture "$WORK/now.ppm"
    status=$(status_digest "$WORK/now.ppm")
    key ctrl+z
    sleep 1
    [ "$(autosave_field fx)" = 128 ] || die "Ctrl+Z did not restore fx (autosave fx: $(autosave_field fx))"
    wait_landed "run after the undo" "$status"
    shot undo

    # History: the second tab of the Code | History tab bar.
    STEP="history"
    capture "$WORK/now.ppm"
    before=$(img digest "$WORK/now.ppm" $c2 $rsplit $rx1 $bottom)
    click $((c2 + 90)) $((rsplit + 16))
    capture "$WORK/now.ppm"
    [ "$(img digest "$WORK/now.ppm" $c2 $rsplit $rx1 $bottom)" != "$before" ] ||
        die "clicking the History tab at $((c2 + 90)),$((rsplit + 16)) changed nothing"
    shot history
    # Its "Save to database" button (bottom right) records this run: a row appears.
    STEP="history: save to database"
    before=$(img digest "$WORK/now.ppm" $c2 $rsplit $rx1 $bottom)
    click $((rx1 - 45)) $((bottom - 30))
    sleep 1
    capture "$WORK/now.ppm"
    [ "$(img digest "$WORK/now.ppm" $c2 $rsplit $rx1 $bottom)" != "$before" ] ||
        die "clicking Save to database at $((rx1 - 45)),$((bottom - 30)) changed nothing"
    shot history-saved

    STEP="File menu"
    click $((wx + 18)) $((wy + 10))
    shot file-menu
    key Escape

    STEP="quit"
    key ctrl+q
    for i in $(seq 40); do ide_alive || break; sleep 0.25; done
    if ide_alive; then
        die "tessel-ide did not exit within 10 s of Ctrl+Q"
    fi
    local rc=0
    wait "$IDE_PID" || rc=$?
    IDE_PID=""
    [ "$rc" = 0 ] || die "tessel-ide exited with status $rc after Ctrl+Q"
    kill "$XVFB_PID" 2>/dev/null || true
    wait "$XVFB_PID" 2>/dev/null || true
    XVFB_PID=""
    STEP=""
    mkdir -p "$OUT/$SIZE"
    rm -f "$OUT/$SIZE"/[0-9][0-9]-*.png
    mv "$DIR"/*.png "$OUT/$SIZE/"
    say "$SIZE: $NN screenshots in ${OUT#$ROOT/}/$SIZE"
}

for s in $SIZES; do
    walk "$s"
done
say "done: $(for s in $SIZES; do echo -n "${OUT#$ROOT/}/$s "; done)"
