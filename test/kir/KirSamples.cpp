// kir kernels built by hand (KirSamples.h).
#include "test/kir/KirSamples.h"

namespace fusec::test {

using namespace kir;

kir::Kernel hopperSample() {
  Kernel k;
  k.name = "hopper";
  k.comment = {"a warp-specialized TMA skeleton (test/kir/KirSamples.h)"};
  k.maxThreads = 384;
  k.minBlocks = 1;
  Builder b(k);
  ValueId aMap = b.tensorMapParam("a_map");
  ValueId bMap = b.tensorMapParam("b_map");
  ValueId out = b.param("out", Type::pointer(DType::F32, Space::Global));
  ValueId smem = b.dynamicShared(DType::I8, "smem", 1024);
  ValueId bars = b.sharedArray(DType::I64, 2, "bars", 8);
  ValueId tid = b.special(Special::TidX);
  ValueId full = b.index(0), empty = b.index(1); // bars[0]: the tiles landed; bars[1]: read
  ValueId first = b.less(tid, b.index(1));
  b.ifThenElse(first, [&] {
    b.mbarrierInit(bars, full, 1);
    b.mbarrierInit(bars, empty, 256);
    b.mbarrierInitFence();
  });
  b.barrier(); // the inits are visible to every thread
  ValueId warpgroup = b.arith(IndexOp::Div, tid, b.index(128), "warpgroup");
  ValueId parity = b.constant(DType::I32, 0);
  ValueId producer = b.less(warpgroup, b.index(1));
  b.ifThenElse(
      producer,
      [&] {
        b.setMaxRegisters(40, false);
        b.ifThenElse(first, [&] {
          ValueId x = b.convert(DType::I32, b.special(Special::CtaidX), "x");
          ValueId y = b.constant(DType::I32, 0);
          ValueId z = b.constant(DType::I32, 1);
          ValueId second = b.index(8192);
          b.mbarrierExpectTx(bars, full, 16384); // two boxes of 8 KiB
          b.tensorLoad(smem, full, aMap, bars, full, {x, y});
          b.tensorLoad(smem, second, bMap, bars, full, {x, y, z});
        });
        ValueId both = b.constant(DType::I32, 2);
        b.barrierArrive(both, 384);
      },
      [&] {
        b.setMaxRegisters(232, true);
        b.mbarrierWait(bars, full, parity);
        ValueId tile = b.dynamicShared(DType::F32, "tile", 1024);
        ValueId t = b.arith(IndexOp::Sub, tid, b.index(128), "t");
        ValueId v = b.load(tile, t, 1, "v");
        b.store(out, t, v);
        b.mbarrierArrive(bars, empty);
        ValueId consumers = b.constant(DType::I32, 1);
        b.barrier(consumers, 256);
        ValueId both = b.constant(DType::I32, 2);
        b.barrier(both, 384);
        b.mbarrierWait(bars, empty, parity);
      });
  return k;
}

kir::Kernel clusterSample() {
  Kernel k;
  k.name = "cluster";
  k.comment = {"two blocks of a cluster share a TMA box (test/kir/KirSamples.h)"};
  k.maxThreads = 128;
  k.dependent = true;
  Builder b(k);
  ValueId map = b.tensorMapParam("map");
  ValueId out = b.param("out", Type::pointer(DType::F32, Space::Global));
  ValueId smem = b.dynamicShared(DType::I8, "smem", 1024);
  ValueId bars = b.sharedArray(DType::I64, 2, "bars", 8);
  ValueId tid = b.special(Special::TidX);
  ValueId full = b.index(0), empty = b.index(1);
  ValueId first = b.less(tid, b.index(1));
  b.ifThenElse(first, [&] {
    b.mbarrierInit(bars, full, 1);
    b.mbarrierInit(bars, empty, 2); // one arrival from each block
    b.mbarrierInitFence();
  });
  b.clusterBarrier();
  ValueId block = b.convert(DType::I32, b.special(Special::CtaidX), "block");
  ValueId two = b.constant(DType::I32, 2);
  ValueId rank = b.arith(IndexOp::Rem, block, two, "rank");
  ValueId zero = b.constant(DType::I32, 0);
  ValueId lead = b.less(rank, b.constant(DType::I32, 1));
  b.ifThenElse(first, [&] {
    b.mbarrierExpectTx(bars, full, 8192);
    b.ifThenElse(lead, [&] { b.tensorLoad(smem, full, map, bars, full, {zero, zero}, 3); });
    b.mbarrierWait(bars, full, zero);
    ValueId tile = b.dynamicShared(DType::F32, "tile", 1024);
    ValueId v = b.load(tile, b.index(0), 1, "v");
    b.store(out, b.convert(DType::I64, rank), v);
    b.mbarrierArriveRemote(bars, empty, zero);
    b.ifThenElse(lead, [&] { b.mbarrierWait(bars, empty, zero); });
  });
  b.clusterBarrier();
  return k;
}

kir::Kernel storeSample() {
  Kernel k;
  k.name = "store";
  k.comment = {"a tile stored by TMA (test/kir/KirSamples.h)"};
  k.maxThreads = 128;
  Builder b(k);
  ValueId map = b.tensorMapParam("map");
  ValueId words = b.param("words", Type::pointer(DType::I32, Space::Global), true);
  ValueId x = b.param("x", Type::scalar(DType::I32));
  ValueId tid = b.special(Special::TidX);
  ValueId word = b.load(words, tid, 1, "word");
  ValueId tile = b.dynamicShared(DType::F32, "tile", 1024);
  ValueId two = b.index(2);
  ValueId at = b.mul(tid, two, "at");
  for (unsigned half = 0; half < 2; ++half) {
    ValueId v = b.unpack(DType::F16, word, half, half ? "hi" : "lo");
    ValueId offset = b.index(half);
    b.store(tile, b.add(at, offset), v);
  }
  b.warpBarrier();
  b.proxyFence();
  b.barrier();
  ValueId zero = b.constant(DType::I32, 0);
  b.ifThenElse(b.less(tid, b.index(1)), [&] {
    ValueId smem = b.dynamicShared(DType::I8, "smem", 1024);
    b.tensorStore(smem, b.index(0), map, {x, zero});
    b.bulkCommit();
    b.bulkWait(0);
  });
  return k;
}

std::optional<kir::Kernel> kirSample(const std::string &name) {
  if (name == "hopper")
    return hopperSample();
  if (name == "cluster")
    return clusterSample();
  if (name == "store")
    return storeSample();
  return std::nullopt;
}

} // namespace fusec::test
