"""Building both sides and finding their binaries."""
import os
import subprocess
import sys

from .programs import ProgramFailed


def build_peers(benchmarks):
    """Runs peers/build (quick when up to date); returns the peers' bin directory."""
    build = os.path.join(benchmarks, "peers", "build")
    if subprocess.run([build], stdout=sys.stderr).returncode != 0:
        raise ProgramFailed("Benchmarks/peers/build failed (its output is above)")
    return os.path.join(benchmarks, ".peers-bin")


class SwiftSide:
    """The Swift binaries. `benchmark` and `authkit` are required for every
    AuthKit column; the floors are optional (None: their rows are skipped)."""

    def __init__(self, bin_dir):
        def path(name):
            p = os.path.join(bin_dir, name)
            return p if os.access(p, os.X_OK) else None

        self.bin_dir = bin_dir
        self.benchmark = path("AuthKitBenchmark")
        self.authkit = path("authkit")
        self.floor = path("AuthKitFloor")
        self.floor_foundation = path("AuthKitFloorFoundation")

    def missing_required(self, names):
        """The binaries the selected rows need that are not there: the
        sign-in and token-print rows run authkit, the floor rows only the
        optional floors, every other row AuthKitBenchmark."""
        needed = []
        if set(names) - {"signin", "floor", "token-print"}:
            needed.append(("AuthKitBenchmark", self.benchmark))
        if {"signin", "token-print"} & set(names):
            needed.append(("authkit", self.authkit))
        return [name for name, p in needed if p is None]


# Built as README.md tells users to build authkit: with the Swift runtime and
# Foundation linked in (--static-swift-stdlib), so every Swift program here,
# the floors included, starts the way the shipped binary does.
SWIFT_BUILD = ["swift", "build", "-c", "release", "--static-swift-stdlib", "--disable-local-rpath"]


def forget_build_plan(package):
    """Removes the release build plan SwiftPM cached in `package`/.build. A
    nested package (Benchmarks/, Examples/) depends on the root by path, and
    SwiftPM reuses its cached plan when only the root gained or lost a source
    file: the root's modules are then compiled without the new file ("cannot
    find 'X' in scope"). Planning again takes seconds and compiles nothing
    more than needed."""
    try:
        os.remove(os.path.join(package, ".build", "release.yaml"))
    except FileNotFoundError:
        pass


def _swift_build(root, product):
    """One `swift build -c release --static-swift-stdlib --disable-local-rpath --product X`; its output goes to stderr."""
    forget_build_plan(root)
    command = SWIFT_BUILD + ["--product", product]
    print("$ " + " ".join(command), file=sys.stderr, flush=True)
    try:
        return subprocess.run(command, cwd=root, stdout=sys.stderr).returncode == 0
    except OSError as e:
        print("cannot run swift: %s" % e, file=sys.stderr)
        return False


def links_swift_runtime(binary):
    """Whether `binary` loads libswiftCore.so at run time: the mark of a
    build without --static-swift-stdlib (an incremental `swift build -c
    release` leaves one in Benchmarks/.build/release, where --no-swift-build looks).
    Read from the ELF dynamic section's needed libraries, as `ldd` would
    list them, without running anything."""
    try:
        shown = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True)
    except OSError:
        return False  # no binutils: nothing to say
    return shown.returncode == 0 and "libswiftCore.so" in shown.stdout


def build_swift(root, names, build=True, bin_dir=None):
    """Builds the Swift products (unless build is False: then whatever
    Benchmarks/.build/release holds is used) and returns a SwiftSide for the
    rows in `names`. bin_dir: where to look instead of Benchmarks/.build/release.

    Everything is built from the nested package in Benchmarks/ (its
    Package.swift depends on the root by path), authkit included, so one
    release build serves every row."""
    root = os.path.join(root, "Benchmarks")
    bin_dir = os.path.abspath(bin_dir) if bin_dir else os.path.join(root, ".build", "release")
    if build:
        for product in ("AuthKitBenchmark", "authkit"):
            if not _swift_build(root, product):
                raise ProgramFailed("swift build --product %s failed (its output is above); the AuthKit side "
                                    "cannot run. --peers-only measures the peers alone." % product)
        for product in ("AuthKitFloor", "AuthKitFloorFoundation"):
            if not _swift_build(root, product):
                print("note: %s did not build; its floor row is skipped" % product, file=sys.stderr)
        shown = subprocess.run(SWIFT_BUILD + ["--show-bin-path"], cwd=root,
                               capture_output=True, text=True)
        if shown.returncode == 0 and shown.stdout.strip():
            bin_dir = shown.stdout.strip()
    swift = SwiftSide(bin_dir)
    if not build:
        for binary in (swift.benchmark, swift.authkit, swift.floor, swift.floor_foundation):
            if binary and links_swift_runtime(binary):
                print("note: %s links the Swift runtime dynamically (built without --static-swift-stdlib), so its rows "
                      "do not measure the build README describes: the library rows read about a tenth slower, the "
                      "sign-in and floors slower still. Rebuild with `%s --product %s`, or drop --no-swift-build."
                      % (binary, " ".join(SWIFT_BUILD), os.path.basename(binary)), file=sys.stderr)
    missing = swift.missing_required(names)
    if missing:
        raise ProgramFailed("the AuthKit side is not built: no %s in %s. Build it with `swift build -c release --static-swift-stdlib --disable-local-rpath "
                            "--product AuthKitBenchmark` and `--product authkit` (or drop --no-swift-build / --swift-bin), "
                            "or pass --peers-only to measure the peers alone."
                            % (" or ".join(missing), bin_dir))
    return swift
