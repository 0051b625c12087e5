#include "textflag.h"

// func Line(p *byte)
TEXT ·Line(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	RET

// func Addr(a uintptr)
TEXT ·Addr(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ a+0(FP), AX
	PREFETCHT0 (AX)
	RET
