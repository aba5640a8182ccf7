// The 1-D FFT of npb_ft: see ft_fft.hpp.
#include "ft_fft.hpp"

#include <cmath>
#include <utility>

namespace ft {

Fft1d::Fft1d(int n) : n_(n), bit_reversed_(n), twiddle_(n / 2) {
    int bits = 0;
    while ((1 << bits) < n) ++bits;
    for (int i = 0; i < n; ++i) {
        int r = 0;
        for (int b = 0; b < bits; ++b)
            if (i & (1 << b)) r |= 1 << (bits - 1 - b);
        bit_reversed_[i] = r;
    }
    const double pi = std::acos(-1.0);
    for (int k = 0; k < n / 2; ++k)
        twiddle_[k] = {std::cos(2 * pi * k / n), -std::sin(2 * pi * k / n)};
}

void Fft1d::transform(Complex* data, int sign) const {
    for (int i = 0; i < n_; ++i)
        if (i < bit_reversed_[i]) std::swap(data[i], data[bit_reversed_[i]]);
    const double conj = sign > 0 ? -1.0 : 1.0;
    for (int len = 2; len <= n_; len <<= 1) {
        const int half = len / 2, step = n_ / len;
        for (int start = 0; start < n_; start += len) {
            Complex* lo = data + start;
            Complex* hi = lo + half;
            for (int k = 0; k < half; ++k) {
                const double wr = twiddle_[k * step].re, wi = conj * twiddle_[k * step].im;
                const double br = hi[k].re * wr - hi[k].im * wi;
                const double bi = hi[k].re * wi + hi[k].im * wr;
                hi[k] = {lo[k].re - br, lo[k].im - bi};
                lo[k] = {lo[k].re + br, lo[k].im + bi};
            }
        }
    }
}

void Fft1d::transform_lines(Complex* data, int count, std::ptrdiff_t line_step,
                            std::ptrdiff_t stride, int sign, std::vector<Complex>& buffer) const {
    if (stride == 1) {
        for (int l = 0; l < count; ++l) transform(data + l * line_step, sign);
        return;
    }
    buffer.resize(n_);
    for (int l = 0; l < count; ++l) {
        Complex* line = data + l * line_step;
        for (int i = 0; i < n_; ++i) buffer[i] = line[i * stride];
        transform(buffer.data(), sign);
        for (int i = 0; i < n_; ++i) line[i * stride] = buffer[i];
    }
}

}  // namespace ft
