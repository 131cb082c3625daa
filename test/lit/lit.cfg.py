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
config.substitutions.append(("%built_examples", os.path.join(config.fusec_obj_root, "examples")))
config.substitutions.append(("%python", config.python))
config.substitutions.append(("%fusec_src", config.fusec_src_root))
