# Sourced by scripts/c-install.sh and scripts/dist.sh: the one text of ewise.pc.
#
# write_ewise_pc FILE PREFIX VERSION LIBS_PRIVATE: writes the pkg-config file FILE for a
# prefix laid out as c-install.sh lays it out (lib/, include/). PREFIX is written as given:
# a path, or '${pcfiledir}/../..' for a relocatable prefix.
write_ewise_pc() {
    local file="$1" prefix="$2" version="$3" libs_private="$4"
    cat >"$file" <<PC
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: ewise
Description: Bit-exact DirectML ELEMENT_WISE_SIGN and ELEMENT_WISE_IS_INFINITY on the CPU or any GPU (C ABI)
Version: $version
Libs: -L\${libdir} -lewise
Libs.private: $libs_private
Cflags: -I\${includedir}
PC
}
