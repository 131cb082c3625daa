// Writing model files: a module as a flatbuffer (schema/model.fbs), with
// large constants optionally moved to the external data file beside it.
//
// The writer stores everything the IR holds, so that load(write(m)) prints
// exactly as m does: graph and value names, types with symbolic dims and
// layout tags, attributes in order with their kinds, constant bytes. Every
// scalar is written even when it equals the schema's default
// (ForceDefaults): -0.0 survives the round trip, and the root's file_size
// field exists to be patched once the size is known; then the checksum is
// patched in (Note [File checksums]), the external data's checksum having
// been written with the root. Each DenseData is written once and referenced
// by index, so weights shared between ops or graphs stay shared after
// loading. A splat (Note [Splat constants] in ir/Attribute.h) is written as
// its one element with the `splat` flag, always inline; the flag is written
// only then, so that files without splats stay format version 1.
//
// Files are written atomically (ir/FileIO.h): the data file first, then the
// model file, each to a temporary file renamed over the target.
#include "frontend/Checksum.h"
#include "frontend/ModelFile.h"
#include "frontend/ModelSchema.h"
#include "ir/Assert.h"
#include "ir/FileIO.h"

#include <unordered_map>
#include <unordered_set>

namespace fusec {
namespace {

using namespace modelfile;
template <typename T> using Offset = flatbuffers::Offset<T>;
template <typename T> using OffsetVector = Offset<flatbuffers::Vector<Offset<T>>>;

class Serializer {
public:
  explicit Serializer(uint64_t externalThreshold) : threshold(externalThreshold) {
    fbb.ForceDefaults(true);
  }

  /// The model file's bytes; externalData() then holds the data file's.
  std::vector<uint8_t> serialize(const Module &m);
  const std::vector<uint8_t> &externalData() const { return external; }

private:
  OffsetVector<fb::Dim> dims(const Shape &shape);
  Offset<fb::Tensor> tensor(const Value &v);
  uint32_t constant(const DenseRef &data);
  Offset<fb::Constant> constantTable(const DenseData &data,
                                     Offset<flatbuffers::Vector<int64_t>> shape,
                                     Offset<flatbuffers::Vector<uint8_t>> inlined,
                                     const fb::ExternalData *external);
  Offset<void> attrValue(const Attribute &a);
  Offset<fb::Attr> attr(const NamedAttr &a);
  Offset<fb::Node> node(const Op &op);
  Offset<fb::Graph> graph(const Graph &g);

  flatbuffers::FlatBufferBuilder fbb;
  uint64_t threshold;
  std::unordered_map<const DenseData *, uint32_t> constantIndex;
  std::vector<Offset<fb::Constant>> constants;
  std::vector<uint8_t> external;
  bool wroteSplat = false;
};

/// Whether `d` is written as a splat: one element stands for more than one.
bool writtenAsSplat(const DenseData &d) { return d.isSplatForm() && d.numElements() > 1; }

/// Whether a write with external-data `threshold` keeps `d` inline.
bool keptInline(const DenseData &d, uint64_t threshold) {
  return threshold == 0 || d.storedBytes().size() < threshold || writtenAsSplat(d);
}

OffsetVector<fb::Dim> Serializer::dims(const Shape &shape) {
  std::vector<Offset<fb::Dim>> out;
  for (const Dim &d : shape)
    out.push_back(d.isStatic() ? fb::CreateDim(fbb, d.size)
                               : fb::CreateDim(fbb, 0, fbb.CreateString(d.symbol)));
  return fbb.CreateVector(out);
}

Offset<fb::Tensor> Serializer::tensor(const Value &v) {
  FUSEC_ASSERT(!v.name().empty(), "serializing an unnamed value");
  auto name = fbb.CreateString(v.name());
  auto shape = dims(v.type().shape);
  return fb::CreateTensor(fbb, name, toSchema(v.type().dtype), shape, toSchema(v.type().layout));
}

uint32_t Serializer::constant(const DenseRef &data) {
  FUSEC_ASSERT(data, "null dense attribute");
  auto [it, fresh] = constantIndex.try_emplace(data.get(), uint32_t(constants.size()));
  if (!fresh)
    return it->second;
  auto shape = fbb.CreateVector(data->shape);
  const std::vector<uint8_t> &bytes = data->storedBytes();
  if (keptInline(*data, threshold)) {
    fbb.ForceVectorAlignment(bytes.size(), 1, kDataAlignment);
    auto inlined = fbb.CreateVector(bytes);
    constants.push_back(constantTable(*data, shape, inlined, nullptr));
    return it->second;
  }
  external.resize((external.size() + kDataAlignment - 1) / kDataAlignment * kDataAlignment);
  fb::ExternalData ref(external.size(), bytes.size());
  external.insert(external.end(), bytes.begin(), bytes.end());
  constants.push_back(constantTable(*data, shape, 0, &ref));
  return it->second;
}

// fb::CreateConstant, but with the splat flag only on a splat: ForceDefaults
// would write a false one into every constant.
Offset<fb::Constant> Serializer::constantTable(const DenseData &data,
                                               Offset<flatbuffers::Vector<int64_t>> shape,
                                               Offset<flatbuffers::Vector<uint8_t>> inlined,
                                               const fb::ExternalData *external) {
  fb::ConstantBuilder b(fbb);
  b.add_external(external);
  b.add_data(inlined);
  b.add_shape(shape);
  if (writtenAsSplat(data)) {
    b.add_splat(true);
    wroteSplat = true;
  }
  b.add_dtype(toSchema(data.dtype));
  return b.Finish();
}

Offset<void> Serializer::attrValue(const Attribute &a) {
  switch (a.kind()) {
  case AttrKind::Int:
    return fb::CreateIntAttr(fbb, a.get<int64_t>()).Union();
  case AttrKind::Float:
    return fb::CreateFloatAttr(fbb, a.get<double>()).Union();
  case AttrKind::Bool:
    return fb::CreateBoolAttr(fbb, a.get<bool>()).Union();
  case AttrKind::String:
    return fb::CreateStringAttr(fbb, fbb.CreateString(a.get<std::string>())).Union();
  case AttrKind::Ints:
    return fb::CreateIntsAttr(fbb, fbb.CreateVector(a.get<std::vector<int64_t>>())).Union();
  case AttrKind::DType:
    return fb::CreateDTypeAttr(fbb, toSchema(a.get<DType>())).Union();
  case AttrKind::Shape:
    return fb::CreateShapeAttr(fbb, dims(a.get<Shape>())).Union();
  case AttrKind::Dense:
    return fb::CreateDenseAttr(fbb, constant(a.get<DenseRef>())).Union();
  }
  FUSEC_ASSERT(false, "unknown attribute kind");
}

/// The schema's union tag for each attribute kind.
fb::AttrValue attrTag(AttrKind k) {
  switch (k) {
  case AttrKind::Int:
    return fb::AttrValue::IntAttr;
  case AttrKind::Float:
    return fb::AttrValue::FloatAttr;
  case AttrKind::String:
    return fb::AttrValue::StringAttr;
  case AttrKind::Bool:
    return fb::AttrValue::BoolAttr;
  case AttrKind::Ints:
    return fb::AttrValue::IntsAttr;
  case AttrKind::DType:
    return fb::AttrValue::DTypeAttr;
  case AttrKind::Shape:
    return fb::AttrValue::ShapeAttr;
  case AttrKind::Dense:
    return fb::AttrValue::DenseAttr;
  }
  FUSEC_ASSERT(false, "unknown attribute kind");
}

Offset<fb::Attr> Serializer::attr(const NamedAttr &a) {
  auto name = fbb.CreateString(a.name);
  auto value = attrValue(a.value);
  return fb::CreateAttr(fbb, name, attrTag(a.value.kind()), value);
}

Offset<fb::Node> Serializer::node(const Op &op) {
  auto spelling = fbb.CreateString(op.name());
  std::vector<Offset<flatbuffers::String>> inputs;
  for (const Value *v : op.operands())
    inputs.push_back(fbb.CreateString(v->name()));
  std::vector<Offset<fb::Tensor>> outputs;
  for (unsigned i = 0; i < op.numResults(); ++i)
    outputs.push_back(tensor(*op.result(i)));
  std::vector<Offset<fb::Attr>> attrs;
  for (const NamedAttr &a : op.attrs())
    attrs.push_back(attr(a));
  return fb::CreateNode(fbb, spelling, fbb.CreateVector(inputs), fbb.CreateVector(outputs),
                        fbb.CreateVector(attrs));
}

Offset<fb::Graph> Serializer::graph(const Graph &g) {
  auto name = fbb.CreateString(g.name());
  std::vector<Offset<fb::Tensor>> inputs;
  for (unsigned i = 0; i < g.numInputs(); ++i)
    inputs.push_back(tensor(*g.input(i)));
  std::vector<Offset<fb::Node>> nodes;
  for (const auto &op : g.ops())
    nodes.push_back(node(*op));
  std::vector<Offset<flatbuffers::String>> outputs;
  for (const Value *v : g.outputs())
    outputs.push_back(fbb.CreateString(v->name()));
  return fb::CreateGraph(fbb, name, fbb.CreateVector(inputs), fbb.CreateVector(nodes),
                         fbb.CreateVector(outputs));
}

std::vector<uint8_t> Serializer::serialize(const Module &m) {
  std::vector<Offset<fb::Graph>> graphs;
  for (const auto &g : m.graphs)
    graphs.push_back(graph(*g));
  auto producer = fbb.CreateString("fusec " FUSEC_VERSION);
  auto graphVector = fbb.CreateVector(graphs);
  auto constantVector = fbb.CreateVector(constants);
  fb::Checksum placeholder(0), dataChecksum(checksumOf(external));
  uint32_t version = wroteSplat ? kSchemaVersion : kSchemaVersionWithoutSplats;
  fb::FinishModelBuffer(fbb, fb::CreateModel(fbb, version, /*file_size=*/0, producer, graphVector,
                                             constantVector, external.size(), &placeholder,
                                             &dataChecksum));
  std::vector<uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  fb::Model *root = fb::GetMutableModel(bytes.data());
  bool patched = root->mutate_file_size(bytes.size());
  FUSEC_ASSERT(patched, "file_size was not written (ForceDefaults)");
  root->mutable_checksum()->mutate_blake3(fileChecksum(bytes, root->checksum()));
  return bytes;
}

/// Bytes of constants that a write with `threshold` keeps inline.
uint64_t inlineConstantBytes(const Module &m, uint64_t threshold) {
  std::unordered_set<const DenseData *> seen;
  uint64_t total = 0;
  for (const auto &g : m.graphs)
    for (const auto &op : g->ops())
      for (const NamedAttr &a : op->attrs()) {
        if (a.value.kind() != AttrKind::Dense)
          continue;
        const DenseData *d = a.value.get<DenseRef>().get();
        if (seen.insert(d).second && keptInline(*d, threshold))
          total += d->storedBytes().size();
      }
  return total;
}

/// The first kernel op of `m`, or null.
const Op *findKernel(const Module &m) {
  for (const auto &g : m.graphs)
    for (const auto &op : g->ops())
      if (op->kind() == OpKind::Kernel)
        return op.get();
  return nullptr;
}

} // namespace

bool storableAsModelFile(const Module &m) { return !findKernel(m); }

std::vector<uint8_t> serializeModel(const Module &m) {
  FUSEC_ASSERT(storableAsModelFile(m), "model files do not store kernel ops");
  FUSEC_ASSERT(inlineConstantBytes(m, 0) <= kMaxInlineConstantBytes,
               "constants too large for an inline model file; use writeModelFile with "
               "an external data threshold");
  return Serializer(0).serialize(m);
}

bool writeModelFile(const Module &m, const std::string &path, const ModelWriteOptions &opts,
                    Diagnostics &diags) {
  if (const Op *kernel = findKernel(m)) {
    diags.error(kernel->loc(), "cannot write '" + path + "': '@" + kernel->parent()->name() +
                                   "' holds 'kernel' ops, which model files do not store; "
                                   "write the graph before fusion");
    return false;
  }
  uint64_t inlined = inlineConstantBytes(m, opts.externalDataThreshold);
  if (inlined > kMaxInlineConstantBytes) {
    diags.error(Loc{}, "cannot write '" + path + "': " + std::to_string(inlined) +
                           " bytes of constants inline exceed the limit of " +
                           std::to_string(kMaxInlineConstantBytes) +
                           "; store large constants as external data");
    return false;
  }
  Serializer serializer(opts.externalDataThreshold);
  std::vector<uint8_t> bytes = serializer.serialize(m);
  const std::vector<uint8_t> &data = serializer.externalData();
  if (!data.empty() && !writeFileAtomically(externalDataPath(path), data, diags))
    return false;
  return writeFileAtomically(path, bytes, diags);
}

} // namespace fusec
