#!/usr/bin/env bash
# cibuildwheel's before-all step: install SuiteSparse (KLU and its dependencies) where the
# wheels are built. The wheel repair step (auditwheel / delocate / delvewheel) then copies the
# libraries into the wheel, so users need neither SuiteSparse nor a compiler.
set -euo pipefail
case "$(uname -s)" in
    Linux)
        # manylinux_2_28 images are AlmaLinux 8: SuiteSparse comes from EPEL (+ PowerTools).
        if command -v dnf >/dev/null 2>&1; then
            dnf install -y epel-release
            dnf config-manager --set-enabled powertools || dnf config-manager --set-enabled crb || true
            dnf install -y suitesparse-devel
        elif command -v apt-get >/dev/null 2>&1; then
            apt-get update -qq && apt-get install -y -qq libsuitesparse-dev
        else
            echo "cibw_before_all: no dnf or apt-get to install SuiteSparse" >&2
            exit 1
        fi
        ;;
    Darwin)
        brew install suite-sparse
        ;;
    MINGW*|MSYS*|CYGWIN*)
        # vcpkg is preinstalled on the CI images; KLU pulls in AMD, COLAMD, BTF and config;
        # LDL (the explicit method's Schur complement) is its own port.
        vcpkg install suitesparse-klu:x64-windows suitesparse-ldl:x64-windows
        ;;
    *)
        echo "cibw_before_all: unsupported platform $(uname -s)" >&2
        exit 1
        ;;
esac
