package io.attnproof.attention.backend;

/** N1 on the cuda-emu lane: the race checker over every kernel of the source on the claim inputs. */
class CudaEmuRaceTest extends RaceClaims {
    @Override
    Backend lane() {
        return Backend.cudaEmu();
    }
}
