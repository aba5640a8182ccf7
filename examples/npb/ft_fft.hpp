// The 1-D FFT of npb_ft: an iterative radix-2 complex transform (bit-reversal
// permutation, then log2(n) butterfly passes) with precomputed twiddles.
// Complex numbers are a plain pair of doubles: the arithmetic is written out,
// so it is the same in every build (std::complex's operator* may call a
// library routine for its NaN rules) and sends as 2 MPI_DOUBLEs.
#pragma once

#include <cstddef>
#include <vector>

namespace ft {

struct Complex {
    double re, im;
};

class Fft1d {
  public:
    explicit Fft1d(int n);
    int size() const { return n_; }

    // In place on n contiguous values; sign -1 is forward, +1 inverse
    // (unnormalized both ways).
    void transform(Complex* data, int sign) const;

    // `count` lines, the first at `data`, each `line_step` apart, their
    // elements `stride` apart: copied to `buffer`, transformed, copied back.
    void transform_lines(Complex* data, int count, std::ptrdiff_t line_step, std::ptrdiff_t stride,
                         int sign, std::vector<Complex>& buffer) const;

  private:
    int n_;
    std::vector<int> bit_reversed_;
    std::vector<Complex> twiddle_;  // exp(-2 pi i k / n), k < n / 2
};

}  // namespace ft
