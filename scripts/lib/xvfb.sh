# Sourced by the scripts that run Windows programs on the GPU under wine
# (scripts/windows-test.sh, scripts/windows-c-test.sh), with `who` set to the caller's
# name for its messages. Wine reaches the host's Vulkan driver (Mesa's lavapipe) only
# through its X11 display driver (winex11.drv), which does not load without an X display:
# with none, a Windows program under wine finds no Vulkan and no Direct3D adapter at all.
#
# xvfb_start: makes DISPLAY name a running X server and returns 0, or says why not on
#   stderr and returns 1. Where EWISE_XVFB_DISPLAY names one (a calling script's), it is
#   used as it is and left running. Otherwise Debian's Xvfb (a virtual framebuffer; apt-get
#   install xvfb, done here as root when it is missing) is started on the first free
#   display it finds itself (-displayfd), listening on no TCP port, and EWISE_XVFB_DISPLAY
#   is exported for the scripts this one runs.
# xvfb_stop: stops the server xvfb_start started (nothing else), and waits for its end.
#   Call it after every program that uses the display has ended (after `scripts/wine.sh
#   --kill`), from an EXIT trap, so that nothing is left running however the script ends.

xvfb_pid=""

xvfb_start() {
    if [ -n "${EWISE_XVFB_DISPLAY:-}" ]; then
        export DISPLAY="$EWISE_XVFB_DISPLAY"
        return 0
    fi
    if ! command -v Xvfb >/dev/null; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            echo "${who:?}: installing xvfb (apt-get install xvfb), the X server wine's Vulkan needs" >&2
            export DEBIAN_FRONTEND=noninteractive
            { apt-get update -qq && apt-get install -y -qq xvfb; } >&2 ||
                echo "$who: apt-get could not install xvfb" >&2
        fi
        if ! command -v Xvfb >/dev/null; then
            echo "$who: no Xvfb (Debian, as root: apt-get install -y xvfb)" >&2
            return 1
        fi
    fi
    local fd_file
    fd_file="$(mktemp)"
    # -displayfd writes the display number once the server accepts connections.
    Xvfb -displayfd 3 -nolisten tcp -screen 0 1024x768x24 3>"$fd_file" >/dev/null 2>&1 &
    xvfb_pid=$!
    local display="" tries=0
    while [ -z "$display" ] && [ "$tries" -lt 100 ]; do
        if ! kill -0 "$xvfb_pid" 2>/dev/null; then
            break
        fi
        display="$(tr -dc '0-9' <"$fd_file")"
        [ -n "$display" ] || sleep 0.1
        tries=$((tries + 1))
    done
    rm -f "$fd_file"
    if [ -z "$display" ]; then
        echo "$who: Xvfb did not start (no display within 10 s)" >&2
        xvfb_stop
        return 1
    fi
    export DISPLAY=":$display" EWISE_XVFB_DISPLAY=":$display"
    echo "$who: Xvfb on DISPLAY=$DISPLAY (pid $xvfb_pid)" >&2
}

xvfb_stop() {
    if [ -n "$xvfb_pid" ]; then
        kill "$xvfb_pid" 2>/dev/null || true
        wait "$xvfb_pid" 2>/dev/null || true
        xvfb_pid=""
    fi
}
