#include "textflag.h"

// func prefetchLines(base unsafe.Pointer, offs []uint64)
TEXT ·prefetchLines(SB), NOSPLIT|NOFRAME, $0-32
	MOVQ	base+0(FP), AX
	MOVQ	offs_base+8(FP), SI
	MOVQ	offs_len+16(FP), CX
	TESTQ	CX, CX
	JEQ	done
loop:
	MOVQ	(SI), DX
	PREFETCHT0	(AX)(DX*1)
	ADDQ	$8, SI
	DECQ	CX
	JNE	loop
done:
	RET
