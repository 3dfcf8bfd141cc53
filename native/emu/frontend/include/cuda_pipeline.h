// cuda_pipeline.h: empty on purpose: the prelude (cuda_parse.h for the parse, cuda_std.h for the build) declares what it would.
#pragma once
