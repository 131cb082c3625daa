// Internal to the model reader: the state one load shares between reading
// constants (ModelReader.cpp) and reading graphs (ModelGraphReader.cpp), and
// the read budget that keeps a load linear in the size of the file.
//
// Note [Read budget]: a flatbuffer may share subobjects (many offsets to one
// vector or string), so a small file can name a large vector many times and
// make a naive loader copy or hash it each time. The verifier bounds the
// number of tables (to one per 4 bytes of file), and the loader charges the
// footprint of every vector and string it reads against the file size. A file
// whose objects do not overlap, which is every file our writer produces, never
// runs out; one that does is corrupt by definition.
#pragma once

#include "frontend/ModelSchema.h"
#include "ir/Attribute.h"
#include "ir/Diagnostics.h"
#include "ir/Graph.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fusec::modelfile {

/// Where a problem is reported: a location and a prefix naming the part of
/// it ("result 0 ('x'): ", "constant 3: ").
struct Where {
  Loc loc;
  std::string prefix;
};

class LoadContext {
public:
  LoadContext(std::string file, uint64_t fileSize, Diagnostics &diags)
      : file(std::move(file)), budget(fileSize), diags(diags) {}

  /// Reports `message` at `where`; returns false so that callers can
  /// `return ctx.fail(...)`.
  bool fail(const Where &where, const std::string &message) {
    diags.error(where.loc, where.prefix + message);
    return false;
  }
  Diagnostics &diagnostics() { return diags; }
  /// Reports a problem of the file as a whole.
  bool fail(const std::string &message) { return fail(Where{fileLoc(), {}}, message); }
  /// The location of the file as a whole.
  Loc fileLoc() const { return Loc::text(file, 0, 0); }

  /// Charges a vector's footprint (Note [Read budget]) and checks that its
  /// elements are aligned, which flatbuffers' Verifier checks only for the
  /// length field (an empty vector need not be: it has no elements); null
  /// is free.
  template <typename T> bool take(const flatbuffers::Vector<T> *v) {
    if (v && v->size() && reinterpret_cast<uintptr_t>(v->Data()) % alignof(T) != 0)
      return fail("'" + file + "' is corrupt: a vector is misaligned");
    return !v || charge(sizeof(flatbuffers::uoffset_t) + uint64_t(v->size()) * sizeof(T));
  }
  /// Charges a string and views it; null reads as empty.
  bool read(const flatbuffers::String *s, std::string_view &out) {
    out = s ? s->string_view() : std::string_view();
    return !s || charge(sizeof(flatbuffers::uoffset_t) + s->size() + 1);
  }

  const std::string file;

private:
  bool charge(uint64_t bytes);

  uint64_t budget;
  Diagnostics &diags;
};

/// Number of elements of a vector that may be absent.
template <typename T> uint32_t count(const flatbuffers::Vector<T> *v) { return v ? v->size() : 0; }

/// `s` quoted for a message: non-printable bytes escaped, long names cut.
std::string quote(std::string_view s);
/// Value and graph names: letters, digits, '_', '.', '$' (docs/ir.md).
bool isValueName(std::string_view s);
/// Dimension symbols and attribute names: a value name not starting with a digit.
bool isIdentifier(std::string_view s);

/// Reads graph `index` of a verified model into a Graph; null after
/// reporting a problem. `constants` are the model's constants, by index.
std::unique_ptr<Graph> readGraph(const fb::Graph &g, unsigned index,
                                 const std::vector<DenseRef> &constants, LoadContext &ctx);

} // namespace fusec::modelfile
