# lit configuration for fusec: .fir files and CLI tests (.test).
import os
import lit.formats

config.name = "fusec"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".fir", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fusec_obj_root, "test", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.fusec_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%examples", os.path.join(config.fusec_src_root, "examples")))
config.substitutions.append(("%cases", os.path.join(config.fusec_src_root, "test", "gpu", "cases")))
config.substitutions.append(("%built_examples", os.path.join(config.fusec_obj_root, "examples")))
config.substitutions.append(("%python", config.python))
# Writes the ONNX models of test/lit/onnx (Debian's python3 with python3-onnx).
config.substitutions.append(("%onnx_model", config.onnx_python + " " + os.path.join(
    config.fusec_src_root, "test", "lit", "onnx", "Inputs", "models.py")))
config.substitutions.append(("%fusec_src", config.fusec_src_root))

# The CUDA toolkit, when present, lets tests assemble generated PTX (feature
# `ptxas`, substitution %ptxas), compile through NVRTC (feature `nvrtc`) and
# link libdevice into the LLVM back end's kernels (feature `libdevice`);
# without it those tests report UNSUPPORTED.
def find_cuda_home():
    for home in [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]:
        if home and os.path.exists(os.path.join(home, "bin", "ptxas")):
            return home
    return None

cuda_home = find_cuda_home()
if cuda_home:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", os.path.join(cuda_home, "bin", "ptxas")))
    if os.path.exists(os.path.join(cuda_home, "nvvm", "libdevice", "libdevice.10.bc")):
        config.available_features.add("libdevice")
        config.environment["CUDA_HOME"] = cuda_home
    if any(os.path.exists(os.path.join(cuda_home, "lib64", lib))
           for lib in ("libnvrtc.so.13", "libnvrtc.so")):
        config.available_features.add("nvrtc")
        config.environment["CUDA_HOME"] = cuda_home
