// Live ranges over program points (ir/Liveness.h): one forward walk numbers
// the ops and opens a range at each definition; every read extends the range
// of the value it reads.
#include "ir/Liveness.h"

#include "ir/Assert.h"

namespace fusec {

Liveness::Liveness(const Graph &g) {
  for (Value *v : g.inputs())
    ranges[v] = {0, 0};
  unsigned p = 0;
  for (const auto &op : g.ops()) {
    points[op.get()] = ++p;
    for (Value *v : op->operands())
      ranges.at(v).last = p; // defined earlier: the graph verified
    for (unsigned i = 0; i < op->numResults(); ++i)
      ranges[op->result(i)] = {p, p};
  }
  end = p + 1;
  for (Value *v : g.outputs())
    ranges.at(v).last = end;
}

unsigned Liveness::point(const Op &op) const {
  auto it = points.find(&op);
  FUSEC_ASSERT(it != points.end(), "op of another graph");
  return it->second;
}

LiveRange Liveness::range(const Value &v) const {
  auto it = ranges.find(&v);
  FUSEC_ASSERT(it != ranges.end(), "value of another graph");
  return it->second;
}

bool Liveness::diesAt(const Value &v, const Op &op) const { return range(v).last == point(op); }

} // namespace fusec
