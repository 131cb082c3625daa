// The builder methods the checker knows (a fixture for builder-order.test).
ValueId add(ValueId a, ValueId b);
ValueId mul(ValueId a, ValueId b);
ValueId index(int64_t v);
