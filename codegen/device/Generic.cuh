// Device helpers of the generic emitter (codegen/Generic*.cpp).
//
// fusec_group_reduce combines one value per thread within groups of `lanes`
// threads (a power of two) of a block, through a shared scratch array `red`
// of one slot per thread: lane l of group g sits at red[g * groupStride + l *
// laneStride]. A tree of halving steps keeps the lower lane's value on the
// left of `combine`, so a NaN-propagating max stays NaN-propagating. Every
// thread of the block must call it (it synchronizes the block); each gets its
// group's total.

template <typename T, typename F>
__device__ __forceinline__ T fusec_group_reduce(T v, T *red, int group, int lane, int lanes,
                                                int groupStride, int laneStride, F combine) {
  T *mine = red + group * groupStride;
  mine[lane * laneStride] = v;
  __syncthreads();
  for (int half = lanes / 2; half > 0; half /= 2) {
    if (lane < half)
      mine[lane * laneStride] = combine(mine[lane * laneStride], mine[(lane + half) * laneStride]);
    __syncthreads();
  }
  T total = mine[0];
  __syncthreads();
  return total;
}
