/*
 * CALL button box firmware for the ATmega328P at 16 MHz (Arduino Uno / Nano).
 * The protocol, pin map and timing rules are in hardware/PROTOCOL.md; this file implements them.
 *
 * Timing path of a press: pin edge -> pin-change interrupt -> the handler (pcint.S) reads PIND, PINC and
 * TCNT1 after two pushes and queues that raw sample -> the main loop extends the 16-bit time to 64 bits
 * (in order), applies leading-edge debounce and queues a PRESS until the host acknowledges it.
 * The only other interrupts are the UART receive handler (pcint.S: interrupts back on right after it read
 * UDR0) and an empty Timer0 handler that wakes the main loop every millisecond, so a pin change is never
 * held up for long. The CPU sleeps (idle mode) whenever it has nothing to do.
 */
#include <avr/eeprom.h>
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <avr/wdt.h>
#include <stdint.h>
#include <string.h>
#include <util/crc16.h>

#define PROTOCOL_VERSION 1
#define FW_VERSION 0x0100
#define TICK_HZ 2000000UL
#define TICKS_PER_MS 2000U

enum { T_HELLO = 0x01, T_HEARTBEAT, T_PRESS, T_ACK, T_TIME };
enum { T_HELLO_REQ = 0x81, T_ARM, T_DISARM, T_BUZZ, T_LIGHTS, T_TIME_REQ, T_PRESS_ACK };
#define F_ARMED 0x01
#define F_FIRST 0x02
#define F_RESEND 0x04

#define RELEASE_MS 5     /* stable release needed to re-arm a button's detection */
#define RESEND_MS 20     /* a PRESS is resent this often until acknowledged */
#define HEARTBEAT_MS 1000
#define MAX_FRAME 64

/* ---- raw samples from the pin-change interrupt ---------------------------------------------- */
#define SAMPLES 32 /* must match the mask in pcint.S */
/* written by the pin-change handler in pcint.S (hence not static) */
volatile uint16_t s_time[SAMPLES];
volatile uint8_t s_pins[SAMPLES]; /* button bits, 1 = released (pull-up) */
volatile uint8_t s_head;          /* written by the handler */
volatile uint8_t s_tail;          /* written by the main loop */
volatile uint8_t s_overrun;

/* ---- UART receive ------------------------------------------------------------------------------ */
#define RXN 128 /* must match the mask in pcint.S */
/* written by the UART receive handler in pcint.S */
volatile uint8_t rx_buf[RXN];
volatile uint8_t rx_head;
static uint8_t rx_tail;

EMPTY_INTERRUPT(TIMER0_COMPA_vect); /* only wakes the main loop, every millisecond */
EMPTY_INTERRUPT(WDT_vect);          /* entropy gathering at boot */

/* ---- 64-bit clock ------------------------------------------------------------------------------ */
static uint16_t last_raw;
static uint64_t wraps; /* multiples of 0x10000 */

static uint64_t extend(uint16_t raw)
{
	if (raw < last_raw)
		wraps += 0x10000ULL;
	last_raw = raw;
	return wraps | raw;
}

static uint16_t read_tcnt1(void)
{
	uint8_t sreg = SREG;
	cli();
	uint16_t t = TCNT1;
	SREG = sreg;
	return t;
}

/* ---- transmit ring ----------------------------------------------------------------------------- */
#define TXN 256
static uint8_t tx_buf[TXN];
static uint8_t tx_head, tx_tail; /* 8-bit indexes wrap at 256 */
static uint8_t tx_seq;

static uint8_t tx_free(void) { return (uint8_t)(tx_tail - tx_head - 1); }

static void tx_put(uint8_t b) { tx_buf[tx_head++] = b; }

/* COBS-encode payload, CRC over the encoded bytes, 3-byte trailer, 0x00. Returns 0 if no room. */
static uint8_t send_payload(uint8_t *p, uint8_t len)
{
	if (tx_free() < (uint8_t)(len + 6))
		return 0;
	uint16_t crc = 0xFFFF;
	uint8_t i = 0;
	while (1) {
		uint8_t j = i;
		while (j < len && p[j] != 0)
			j++;
		uint8_t code = (uint8_t)(j - i + 1);
		tx_put(code);
		crc = _crc_xmodem_update(crc, code);
		for (uint8_t k = i; k < j; k++) {
			tx_put(p[k]);
			crc = _crc_xmodem_update(crc, p[k]);
		}
		if (j >= len)
			break;
		i = (uint8_t)(j + 1);
	}
	tx_put((uint8_t)(0x80 | (crc >> 10)));
	tx_put((uint8_t)(0x80 | ((crc >> 4) & 0x3F)));
	tx_put((uint8_t)(0x80 | (crc & 0x0F)));
	tx_put(0);
	return 1;
}

static uint8_t msg[24];
static uint8_t mlen;

static void m_begin(uint8_t type)
{
	msg[0] = type;
	msg[1] = tx_seq;
	mlen = 2;
}
static void m_u8(uint8_t v) { msg[mlen++] = v; }
static void m_u16(uint16_t v) { m_u8((uint8_t)v); m_u8((uint8_t)(v >> 8)); }
static void m_u32(uint32_t v) { m_u16((uint16_t)v); m_u16((uint16_t)(v >> 16)); }
static void m_u64(uint64_t v) { m_u32((uint32_t)v); m_u32((uint32_t)(v >> 32)); }
static uint8_t m_send(void)
{
	if (!send_payload(msg, mlen))
		return 0;
	tx_seq++;
	return 1;
}

/* ---- state -------------------------------------------------------------------------------------- */
static uint32_t boot_id;
static uint16_t round_id;
static uint8_t armed, first_taken;
static uint8_t detect;            /* buttons armed for detection (released long enough) */
static uint8_t release_ms[8];
static uint8_t dropped;
static uint16_t next_press_id;
static uint32_t ms;               /* milliseconds since boot, from the main loop */
static uint64_t next_ms_tick;

#define PENDING 32
static struct {
	uint8_t used, mask, flags;
	uint16_t id, round;
	uint64_t tick;
	uint32_t sent_ms;
} pend[PENDING];

static uint8_t light_on, light_blink;
static uint8_t buzz_pattern;
static uint32_t buzz_end_ms, buzz_start_ms;
static uint8_t tone_ocr, tone_cs;

/* ---- outputs ----------------------------------------------------------------------------------- */
static uint8_t lights_written = 0xFF; /* forces the first write */

static void write_lights(uint8_t m)
{
	/* write the ports only on a change: simavr 1.6 (measured) raises a pin change on PC0/PC1 (buttons 6, 7, held low
	 * from outside) whenever PORTC is written, which would cost a pin-change handler run each time */
	if (m == lights_written)
		return;
	lights_written = m;
	/* lights 0..4 = PB0, PB1, PB2, PB4, PB5; lights 5..7 = PC2, PC3, PC4; PB3 is the buzzer */
	uint8_t b = (uint8_t)((m & 0x07) | ((m & 0x18) << 1));
	PORTB = (uint8_t)((PORTB & 0xC8) | b);
	PORTC = (uint8_t)((PORTC & 0xE3) | ((m >> 3) & 0x1C));
}

static void tone(uint8_t on)
{
	if (on) {
		OCR2A = tone_ocr;
		TCCR2A = (1 << COM2A0) | (1 << WGM21);
		TCCR2B = tone_cs;
	} else {
		TCCR2A = 0;
		TCCR2B = 0;
		PORTB &= (uint8_t)~(1 << PB3);
	}
}

static uint8_t set_buzz(uint8_t pattern, uint16_t freq, uint16_t dur)
{
	static const uint16_t div[] = {1, 8, 32, 64, 128, 256, 1024};
	if (pattern > 3)
		return 2;
	if (pattern == 0) {
		buzz_pattern = 0;
		tone(0);
		return 0;
	}
	if (freq < 100 || freq > 10000)
		return 2;
	for (uint8_t i = 0; i < 7; i++) {
		uint32_t top = F_CPU / (2UL * div[i] * freq);
		if (top >= 1 && top <= 256) {
			tone_ocr = (uint8_t)(top - 1);
			tone_cs = (uint8_t)(i + 1);
			break;
		}
	}
	buzz_pattern = pattern;
	buzz_start_ms = ms;
	buzz_end_ms = ms + dur;
	tone(1);
	return 0;
}

static void update_outputs(void)
{
	uint8_t phase = (uint8_t)((ms / 125) & 1);
	write_lights((uint8_t)(light_on | (phase ? light_blink : 0)));
	if (buzz_pattern) {
		uint32_t el = ms - buzz_start_ms;
		if ((int32_t)(ms - buzz_end_ms) >= 0) {
			buzz_pattern = 0;
			tone(0);
		} else if (buzz_pattern >= 2) {
			uint16_t half = buzz_pattern == 2 ? 100 : 50;
			uint8_t on = ((el / half) & 1) == 0;
			uint8_t is_on = TCCR2B != 0;
			if (on != is_on)
				tone(on);
		}
	}
}

static uint64_t sync_time(void);
#define now_ticks sync_time

/* ---- messages ---------------------------------------------------------------------------------- */

static void send_hello(void)
{
	m_begin(T_HELLO);
	m_u8(PROTOCOL_VERSION);
	m_u32(boot_id);
	m_u8(8);
	m_u32(TICK_HZ);
	m_u16(FW_VERSION);
	m_send();
}

static void send_press(uint8_t i)
{
	m_begin(T_PRESS);
	m_u16(pend[i].id);
	m_u64(pend[i].tick);
	m_u8(pend[i].mask);
	m_u8(pend[i].flags);
	m_u16(pend[i].round);
	m_u32(boot_id);
	if (m_send()) {
		pend[i].flags |= F_RESEND;
		pend[i].sent_ms = ms;
	}
}

static void press(uint64_t tick, uint8_t mask)
{
	uint8_t flags = 0;
	if (armed) {
		flags |= F_ARMED;
		if (!first_taken) {
			first_taken = 1;
			flags |= F_FIRST;
			light_on = mask; /* light and buzz the first caller(s) at once */
			light_blink = 0;
			write_lights(mask);
			set_buzz(1, 2000, 300);
		}
	}
	for (uint8_t i = 0; i < PENDING; i++) {
		if (!pend[i].used) {
			pend[i].used = 1;
			pend[i].id = next_press_id++;
			pend[i].tick = tick;
			pend[i].mask = mask;
			pend[i].flags = flags;
			pend[i].round = round_id;
			pend[i].sent_ms = ms - RESEND_MS; /* due now */
			send_press(i);
			return;
		}
	}
	if (dropped != 255)
		dropped++;
}

static void ack(uint8_t seq, uint8_t status)
{
	m_begin(T_ACK);
	m_u8(seq);
	m_u8(status);
	m_send();
}

static void handle(uint8_t *p, uint8_t n)
{
	uint8_t type = p[0], seq = p[1];
	uint8_t blen = (uint8_t)(n - 2);
	uint8_t *b = p + 2;
	switch (type) {
	case T_HELLO_REQ:
		if (blen == 0) { send_hello(); return; }
		break;
	case T_ARM:
		if (blen == 2) {
			uint16_t r = (uint16_t)(b[0] | (b[1] << 8));
			if (!armed || r != round_id) {
				round_id = r;
				armed = 1;
				first_taken = 0;
				light_on = light_blink = 0;
				write_lights(0);
			}
			ack(seq, 0);
			return;
		}
		break;
	case T_DISARM:
		if (blen == 0) { armed = 0; ack(seq, 0); return; }
		break;
	case T_BUZZ:
		if (blen == 5) {
			ack(seq, set_buzz(b[0], (uint16_t)(b[1] | (b[2] << 8)), (uint16_t)(b[3] | (b[4] << 8))));
			return;
		}
		break;
	case T_LIGHTS:
		if (blen == 2) {
			light_on = b[0];
			light_blink = b[1];
			update_outputs();
			ack(seq, 0);
			return;
		}
		break;
	case T_TIME_REQ:
		if (blen == 0) {
			uint64_t t = now_ticks();
			m_begin(T_TIME);
			m_u8(seq);
			m_u64(t);
			m_send();
			return;
		}
		break;
	case T_PRESS_ACK:
		if (blen == 2) {
			uint16_t id = (uint16_t)(b[0] | (b[1] << 8));
			for (uint8_t i = 0; i < PENDING; i++)
				if (pend[i].used && pend[i].id == id)
					pend[i].used = 0;
			return;
		}
		break;
	}
	ack(seq, 1);
}

/* one frame (without its 0x00) from the host: check trailer and CRC, COBS-decode in place */
static void frame_in(uint8_t *f, uint8_t n)
{
	if (n < 6 || n > MAX_FRAME)
		return;
	uint8_t t0 = f[n - 3], t1 = f[n - 2], t2 = f[n - 1];
	if ((t0 & 0xC0) != 0x80 || (t1 & 0xC0) != 0x80 || (t2 & 0xF0) != 0x80)
		return;
	uint16_t want = (uint16_t)(((uint16_t)(t0 & 0x3F) << 10) | ((uint16_t)(t1 & 0x3F) << 4) | (t2 & 0x0F));
	uint16_t crc = 0xFFFF;
	uint8_t e = (uint8_t)(n - 3);
	for (uint8_t i = 0; i < e; i++)
		crc = _crc_xmodem_update(crc, f[i]);
	if (crc != want)
		return;
	uint8_t out = 0, i = 0;
	while (i < e) {
		uint8_t code = f[i];
		if ((uint16_t)i + code > e)
			return;
		for (uint8_t k = 1; k < code; k++)
			f[out++] = f[i + k];
		i = (uint8_t)(i + code);
		if (code != 0xFF && i < e)
			f[out++] = 0;
	}
	if (out < 2)
		return;
	handle(f, out);
}

static uint8_t fbuf[MAX_FRAME];
static uint8_t flen, fskip;

static void rx_byte(uint8_t b)
{
	if (b == 0) {
		if (!fskip)
			frame_in(fbuf, flen);
		flen = 0;
		fskip = 0;
	} else if (flen < MAX_FRAME) {
		fbuf[flen++] = b;
	} else {
		fskip = 1; /* over-long: drop up to the next 0x00 */
	}
}

/* ---- per-sample and per-millisecond work ------------------------------------------------------ */
static void sample(uint64_t tick, uint8_t pins)
{
	uint8_t pressed = (uint8_t)~pins;
	uint8_t fresh = pressed & detect;
	if (fresh) {
		detect &= (uint8_t)~fresh;
		for (uint8_t i = 0; i < 8; i++)
			if (fresh & (1 << i))
				release_ms[i] = 0;
		press(tick, fresh);
	}
}

/* Take the queued samples and the current time together (so they extend in order), process the
 * samples, return the current 64-bit time. Every read of the clock goes through here. */
static uint64_t sync_time(void)
{
	/* interrupts off only for two loads: samples before head were taken before now_raw */
	cli();
	uint8_t h = s_head;
	uint16_t now_raw = TCNT1;
	sei();
	uint8_t t = s_tail;
	while (t != h) {
		uint16_t raw = s_time[t];
		uint8_t pins = s_pins[t];
		t = (uint8_t)((t + 1) & (SAMPLES - 1));
		s_tail = t;
		sample(extend(raw), pins);
	}
	return extend(now_raw);
}

static uint8_t read_buttons(void)
{
	return (uint8_t)((PIND >> 2) | (uint8_t)(PINC << 6));
}

static void every_ms(void)
{
	ms++;
	uint8_t pins = read_buttons();
	for (uint8_t i = 0; i < 8; i++) {
		uint8_t bit = (uint8_t)(1 << i);
		if (detect & bit)
			continue;
		if (pins & bit) {
			if (++release_ms[i] >= RELEASE_MS)
				detect |= bit;
		} else {
			release_ms[i] = 0;
		}
	}
	for (uint8_t i = 0; i < PENDING; i++)
		if (pend[i].used && (uint32_t)(ms - pend[i].sent_ms) >= RESEND_MS)
			send_press(i);
	if (ms % HEARTBEAT_MS == 0) {
		uint8_t np = 0;
		for (uint8_t i = 0; i < PENDING; i++)
			np += pend[i].used;
		m_begin(T_HEARTBEAT);
		m_u64(now_ticks());
		m_u16(round_id);
		m_u8((uint8_t)(armed | (first_taken << 1)));
		m_u8(np);
		m_u8(dropped);
		m_send();
	}
	update_outputs();
}

/* ---- boot --------------------------------------------------------------------------------------- */
static uint32_t EEMEM ee_boots;

static uint32_t make_boot_id(void)
{
	/* boot counter (persists in EEPROM) mixed with the watchdog RC oscillator's jitter vs Timer1 */
	uint32_t boots = eeprom_read_dword(&ee_boots) + 1;
	eeprom_write_dword(&ee_boots, boots);
	uint16_t crc = 0xFFFF, crc2 = 0x1D0F;
	for (uint8_t k = 0; k < 4; k++) {
		crc = _crc_xmodem_update(crc, (uint8_t)(boots >> (8 * k)));
		crc2 = _crc_ccitt_update(crc2, (uint8_t)(boots >> (8 * k)));
	}
	MCUSR &= (uint8_t)~(1 << WDRF);
	cli();
	WDTCSR = (1 << WDCE) | (1 << WDE);
	WDTCSR = (1 << WDIE); /* interrupt mode, 16 ms */
	sei();
	for (uint8_t k = 0; k < 2; k++) {
		uint64_t start = now_ticks();
		uint8_t f0 = 0;
		while (now_ticks() - start < 40000U) { /* 20 ms at most: never hang on a missing watchdog */
			set_sleep_mode(SLEEP_MODE_IDLE);
			sleep_mode();
			if (!(WDTCSR & (1 << WDIE)) || (WDTCSR & (1 << WDIF))) {
				f0 = 1;
				break;
			}
			uint16_t t = read_tcnt1();
			(void)t;
			if (now_ticks() - start > 32000U) { /* watchdog took 16 ms: it has fired */
				f0 = 1;
				break;
			}
		}
		uint16_t t = read_tcnt1();
		crc = _crc_xmodem_update(crc, (uint8_t)t);
		crc = _crc_xmodem_update(crc, (uint8_t)(t >> 8));
		crc2 = _crc_ccitt_update(crc2, (uint8_t)t);
		crc2 = _crc_ccitt_update(crc2, f0);
		WDTCSR |= (1 << WDIE);
	}
	cli();
	wdt_reset();
	WDTCSR = (1 << WDCE) | (1 << WDE);
	WDTCSR = 0;
	sei();
	return ((uint32_t)crc << 16) ^ crc2 ^ (boots * 2654435761UL);
}

int main(void)
{
	/* buttons: inputs with pull-ups */
	DDRD &= 0x03;
	PORTD |= 0xFC;
	DDRC = (DDRC & 0xFC) | 0x1C; /* PC0, PC1 buttons; PC2..PC4 lights */
	PORTC |= 0x03;
	DDRB |= 0x3F;                /* PB0..PB5: lights and the buzzer (PB3) */
	PORTB &= 0xC0;

	/* Timer1: the clock, free running at 2 MHz, never written after this */
	TCCR1A = 0;
	TCCR1B = (1 << CS11);
	/* Timer0: CTC at 1 kHz (16 MHz / 64 / 250) only to wake the main loop; Timer1 is never touched */
	TCCR0A = (1 << WGM01);
	OCR0A = 249;
	TCCR0B = (1 << CS01) | (1 << CS00);
	TIMSK0 = (1 << OCIE0A);

	/* UART 500 kbaud 8N1 */
	UCSR0A = (1 << U2X0);
	UBRR0 = 3;
	UCSR0C = (1 << UCSZ01) | (1 << UCSZ00);
	UCSR0B = (1 << RXEN0) | (1 << TXEN0) | (1 << RXCIE0);

	set_sleep_mode(SLEEP_MODE_IDLE);
	sei();
	boot_id = make_boot_id();

	/* pin-change interrupts on the 8 buttons */
	PCMSK2 = 0xFC;
	PCMSK1 = 0x03;
	PCIFR = (1 << PCIF2) | (1 << PCIF1);
	PCICR = (1 << PCIE2) | (1 << PCIE1);

	next_ms_tick = now_ticks() + TICKS_PER_MS;
	send_hello();

	for (;;) {
		uint64_t now = sync_time();

		/* 2. millisecond work, catching up if we were busy */
		while ((int64_t)(now - next_ms_tick) >= 0) {
			every_ms();
			next_ms_tick += TICKS_PER_MS;
		}

		/* 3. host bytes */
		while (rx_tail != rx_head) {
			uint8_t b = rx_buf[rx_tail & (RXN - 1)];
			rx_tail++;
			rx_byte(b);
		}

		/* 4. transmit by polling; sleep only when there is nothing to send */
		if (tx_head != tx_tail) {
			if (UCSR0A & (1 << UDRE0))
				UDR0 = tx_buf[tx_tail++];
			continue;
		}
		cli();
		if (s_tail == s_head && rx_tail == rx_head) {
			sleep_enable();
			sei();
			sleep_cpu();
			sleep_disable();
		}
		sei();
	}
}
