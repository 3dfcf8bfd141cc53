#include <mma.h>
using namespace nvcuda;
__global__ void k(const __half* a, float* c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::load_matrix_sync(fa, a, 16);
}
