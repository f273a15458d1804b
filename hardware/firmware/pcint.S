/*
 * Pin-change interrupt for the 8 buttons (PCINT1 = port C, PCINT2 = port D share this handler).
 * Written in assembly so that the sample is taken as early as possible and at a fixed offset from the
 * interrupt: 7 cycles after the vector jump lands, PIND then PINC (next cycle), then TCNT1 (low byte
 * first, which latches the high byte) 4 cycles later. The sample (button bits, 1 = released) and its raw
 * 16-bit time go into a 32-entry ring that the main loop drains (callbox.c: sync_time()).
 * Cost: 44 cycles (2.75 us) with interrupts disabled, including the reti.
 */
#include <avr/io.h>

	.section .text.pcint,"ax",@progbits
	.global __vector_4      /* PCINT1_vect: PC0..PC1 = buttons 6..7 */
	.global __vector_5      /* PCINT2_vect: PD2..PD7 = buttons 0..5 */
__vector_4:
__vector_5:
	push r24
	push r25
	in   r24, _SFR_IO_ADDR(PIND)
	in   r25, _SFR_IO_ADDR(PINC)
	push r30
	push r31
	lds  r30, _SFR_MEM_ADDR(TCNT1L)
	lds  r31, _SFR_MEM_ADDR(TCNT1H)
	push r0
	in   r0, _SFR_IO_ADDR(SREG)
	push r0
	push r26
	push r27
	/* pins = (PIND >> 2) | ((PINC & 3) << 6) */
	lsr  r24
	lsr  r24
	swap r25
	lsl  r25
	lsl  r25
	andi r25, 0xC0
	or   r24, r25
	/* ring slot */
	lds  r25, s_head
	mov  r26, r25
	inc  r26
	andi r26, 31
	lds  r27, s_tail
	cp   r26, r27
	brne 1f
	ldi  r27, 1
	sts  s_overrun, r27
	rjmp 2f
1:	mov  r0, r26            /* next head */
	ldi  r26, lo8(s_pins)
	ldi  r27, hi8(s_pins)
	add  r26, r25
	brcc 3f
	inc  r27
3:	st   X, r24
	ldi  r26, lo8(s_time)
	ldi  r27, hi8(s_time)
	lsl  r25
	add  r26, r25
	brcc 4f
	inc  r27
4:	st   X+, r30
	st   X, r31
	sts  s_head, r0
2:	pop  r27
	pop  r26
	pop  r0
	out  _SFR_IO_ADDR(SREG), r0
	pop  r0
	pop  r31
	pop  r30
	pop  r25
	pop  r24
	reti

/*
 * UART receive: read UDR0 first (that clears the request), then re-enable interrupts at once so that a
 * pin change is never held up by more than ~13 cycles of this handler. Stores the byte in a 128-byte ring.
 */
	.section .text.usart_rx,"ax",@progbits
	.global __vector_18     /* USART_RX_vect */
__vector_18:
	push r24
	lds  r24, _SFR_MEM_ADDR(UDR0)
	sei
	push r0
	in   r0, _SFR_IO_ADDR(SREG)
	push r0
	push r25
	push r30
	push r31
	lds  r25, rx_head
	mov  r30, r25
	andi r30, 0x7F
	ldi  r31, 0
	subi r30, lo8(-(rx_buf))
	sbci r31, hi8(-(rx_buf))
	st   Z, r24
	inc  r25
	sts  rx_head, r25
	pop  r31
	pop  r30
	pop  r25
	pop  r0
	out  _SFR_IO_ADDR(SREG), r0
	pop  r0
	pop  r24
	reti
