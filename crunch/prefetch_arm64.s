#include "textflag.h"

// func prefetchLines(base unsafe.Pointer, offs []uint64)
TEXT ·prefetchLines(SB), NOSPLIT|NOFRAME, $0-32
	MOVD	base+0(FP), R0
	MOVD	offs_base+8(FP), R1
	MOVD	offs_len+16(FP), R2
	CBZ	R2, done
loop:
	MOVD.P	8(R1), R3
	ADD	R0, R3, R3
	PRFM	(R3), PLDL1KEEP
	SUB	$1, R2, R2
	CBNZ	R2, loop
done:
	RET
