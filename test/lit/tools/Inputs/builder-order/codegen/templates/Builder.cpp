// A fixture for builder-order.test: two calls build their arguments in an
// order C++ leaves unspecified; the others are sequenced or read only.
struct Sample {
  ValueId in(unsigned i) const { return params[i]; }
  ValueId twice(ValueId v) { return b.add(v, v); }

  void body(ValueId x, ValueId y) {
    ValueId bad = b.mul(b.add(x, y), b.index(4));
    ValueId alsoBad = b.add(twice(x), b.index(1)); // "b.add(x, y)" in a comment does not count
    ValueId four = b.index(4);
    ValueId good = b.mul(b.add(x, y), four);
    ValueId read = b.add(in(0), b.index(2));
    b.math(Add, {b.add(x, y), b.index(3)});
    b.forLoop(b.index(0), [&] { b.add(x, y); });
  }
};
