package io.attnproof.attention.backend;

/** N1 on the metal-emu lane: the race checker over every kernel of the source on the claim inputs. */
class MetalEmuRaceTest extends RaceClaims {
    @Override
    Backend lane() {
        return Backend.metalEmu();
    }
}
