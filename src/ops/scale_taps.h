/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tap tables of the `scale` operator (kernels/scale_math.h has the integer
 * side): which input samples each output sample reads, with which Q14
 * weights. Built once per plane and direction on the host, in double, and
 * handed unchanged to the CPU reference and the CUDA kernels.
 */
#ifndef VKCU_SCALE_TAPS_H
#define VKCU_SCALE_TAPS_H

#include <stddef.h>
#include "kernels/scale_math.h"

enum sc_filter { SC_BILINEAR = 0, SC_BICUBIC, SC_LANCZOS, SC_SPLINE36 };

/* The filter's kernel at x (input samples, unstretched) and its radius. */
double vkcu_sc_kernel(enum sc_filter f, double x);
double vkcu_sc_support(enum sc_filter f);

/*
 * Taps for one direction of one plane. Positions are in luma units of the
 * picture, from its edge: sample j of a plane subsampled by `sub` (1 or 2)
 * sits at j * sub + off (off: 0.5 for a luma sample or co-sited chroma,
 * sub / 2 for centred chroma, sub - 0.5 for bottom-sited chroma). The
 * picture maps edge to edge: input luma position u = output position *
 * luma_in / luma_out. Downscaling stretches the kernel by the ratio (an
 * anti-alias low-pass); taps falling outside the plane are mirrored about
 * its edge (sample -1 reads 0, n reads n - 1). Returns 0, or -1 (no memory,
 * or a table past the bounds scale_math.h relies on) with why filled.
 */
int vkcu_sc_taps_build(sc_taps *t, enum sc_filter f, int n_in, int n_out, int luma_in, int luma_out, int sub,
                  double off_in, double off_out, char *why, size_t whylen);
void vkcu_sc_taps_free(sc_taps *t);

#endif
