# Sourced by the scripts that link against a library cargo built (scripts/c-install.sh,
# scripts/windows-c-test.sh).
#
# built DIR FILE: prints the path of the library FILE of the profile directory DIR
# (target/debug, ...): `cargo build` copies a library from DIR/deps/ up into DIR,
# `cargo test` leaves it in DIR/deps/ only, so the newer of the two copies is the one the
# last build made. Prints DIR/FILE when neither exists, for the caller to name.
built() {
    if [ -f "$1/deps/$2" ] && { [ ! -f "$1/$2" ] || [ "$1/deps/$2" -nt "$1/$2" ]; }; then
        echo "$1/deps/$2"
    else
        echo "$1/$2"
    fi
}
