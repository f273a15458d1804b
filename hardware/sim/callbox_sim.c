/*
 * callbox_sim: runs the real CALL box firmware ELF on simavr (libsimavr from Debian), puts its UART on a
 * pseudo-terminal with simavr's uart_pty part, and injects button edges at exact simulated cycles.
 *
 * Usage: callbox_sim FIRMWARE.elf [EEPROM_SEED_HEX]
 *
 * stdout (line per event, flushed):
 *   ready <pty-path> <cycle>        the host can open <pty-path> like a serial port
 *   now <cycle>                     answer to `now`
 *   edge <cycle> <down-mask> <up-mask>  buttons pressed / released at that simulated cycle (16 MHz)
 *   corrupt <cycle> <orig> <sent>   a byte from the box was corrupted on its way to the pty
 *   corrupt-in <cycle> <orig> <sent>  a byte from the host was corrupted on its way to the box
 *   reset <cycle>                   the chip was reset
 *   light <cycle> <mask>            the button lights changed (bit i = light of button i)
 *   stats <cycle> <lights> <buzzer-toggles>   answer to `stats` (buzzer pin PB3 edges so far)
 * stdin (line per command):
 *   base <delay>                    base := current cycle + delay
 *   ev <offset> <down> <up>         at cycle base+offset, press <down> and release <up> (button masks)
 *   corrupt <n>                     flip one bit in each of the next n bytes the box sends
 *   corrupt-in <n>                  flip one bit in each of the next n bytes the host sends to the box
 *   reset                           reset the chip (like a power glitch); EEPROM is kept
 *   now                             print the current cycle
 *   stats                           print lights and the buzzer pin's edge count
 *   quit
 * Buttons are active low: pressing button i drives its pin to 0 (PD2..PD7 = 0..5, PC0..PC1 = 6..7).
 * Edges are applied from a simavr cycle timer, so all buttons of one `ev` change in the same cycle.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <simavr/avr_eeprom.h>
#include <simavr/avr_ioport.h>
#include <simavr/avr_uart.h>
#include <simavr/parts/uart_pty.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_elf.h>
#include <simavr/sim_irq.h>

static avr_t *avr;
static uart_pty_t pty;
static avr_irq_t *pins[8];
static avr_irq_t *my_uart_out;

/* ---- command queue from the stdin thread ---- */
#define LINE 128
typedef struct cmd { char line[LINE]; struct cmd *next; } cmd_t;
static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static cmd_t *qhead, *qtail;
static atomic_int qcount;
static atomic_int eof_seen;

static void *stdin_thread(void *arg)
{
	(void)arg;
	char buf[LINE];
	while (fgets(buf, sizeof buf, stdin)) {
		cmd_t *c = calloc(1, sizeof *c);
		snprintf(c->line, LINE, "%s", buf);
		pthread_mutex_lock(&qlock);
		if (qtail) qtail->next = c; else qhead = c;
		qtail = c;
		pthread_mutex_unlock(&qlock);
		atomic_fetch_add(&qcount, 1);
	}
	atomic_store(&eof_seen, 1);
	return NULL;
}

/* ---- scheduled edges: a sorted list fed to one simavr cycle timer ---- */
typedef struct { avr_cycle_count_t when; uint8_t down, up; } edge_t;
static edge_t *edges;
static size_t n_edges, cap_edges, next_edge;
static uint8_t level = 0xFF; /* current pin levels, 1 = released */
static int timer_armed;

static void drive(uint8_t down, uint8_t up)
{
	level = (uint8_t)((level | up) & ~down);
	for (int i = 0; i < 8; i++)
		if ((down | up) & (1 << i))
			avr_raise_irq(pins[i], (level >> i) & 1);
}

static avr_cycle_count_t edge_timer(avr_t *a, avr_cycle_count_t when, void *param)
{
	(void)param;
	(void)when;
	while (next_edge < n_edges && edges[next_edge].when <= a->cycle) {
		edge_t *e = &edges[next_edge++];
		drive(e->down, e->up);
		printf("edge %llu %u %u\n", (unsigned long long)a->cycle, e->down, e->up);
	}
	fflush(stdout);
	if (next_edge < n_edges)
		return edges[next_edge].when;
	timer_armed = 0;
	n_edges = next_edge = 0;
	return 0;
}

static int cmp_edge(const void *x, const void *y)
{
	const edge_t *a = x, *b = y;
	return a->when < b->when ? -1 : a->when > b->when;
}

static void schedule(avr_cycle_count_t when, uint8_t down, uint8_t up)
{
	if (n_edges == cap_edges) {
		cap_edges = cap_edges ? cap_edges * 2 : 1024;
		edges = realloc(edges, cap_edges * sizeof *edges);
	}
	if (when <= avr->cycle)
		when = avr->cycle + 1;
	edges[n_edges++] = (edge_t){when, down, up};
}

/* ---- outputs: lights 0..4 = PB0, PB1, PB2, PB4, PB5; 5..7 = PC2..PC4; buzzer PB3 ---- */
static uint8_t lights;
static unsigned long long buzz_toggles;

static void light_hook(struct avr_irq_t *irq, uint32_t value, void *param)
{
	(void)irq;
	int i = (int)(intptr_t)param;
	uint8_t m = (uint8_t)(value ? (lights | (1 << i)) : (lights & ~(1 << i)));
	if (m != lights) {
		lights = m;
		printf("light %llu %u\n", (unsigned long long)avr->cycle, lights);
		fflush(stdout);
	}
}

static void buzz_hook(struct avr_irq_t *irq, uint32_t value, void *param)
{
	(void)irq;
	(void)value;
	(void)param;
	buzz_toggles++;
}

static void hook_outputs(void)
{
	static const struct { char port; int pin; } map[8] = {
		{'B', 0}, {'B', 1}, {'B', 2}, {'B', 4}, {'B', 5}, {'C', 2}, {'C', 3}, {'C', 4}};
	for (int i = 0; i < 8; i++)
		avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(map[i].port), map[i].pin),
		                        light_hook, (void *)(intptr_t)i);
	avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('B'), 3), buzz_hook, NULL);
}

/* ---- UART out of the box, through the corruption hook, into uart_pty ---- */
static int corrupt_left;
static unsigned corrupt_rng = 12345;

static void uart_out_hook(struct avr_irq_t *irq, uint32_t value, void *param)
{
	(void)irq;
	(void)param;
	uint32_t v = value & 0xFF;
	if (corrupt_left > 0) {
		corrupt_left--;
		corrupt_rng = corrupt_rng * 1103515245u + 12345u;
		uint32_t bad = v ^ (1u << ((corrupt_rng >> 16) % 8));
		printf("corrupt %llu %u %u\n", (unsigned long long)avr->cycle, v, bad);
		fflush(stdout);
		v = bad;
	}
	avr_raise_irq(pty.irq + IRQ_UART_PTY_BYTE_IN, v);
}

static int corrupt_in_left;
static avr_irq_t *uart_in_dst, *my_uart_in;

static void uart_in_hook(struct avr_irq_t *irq, uint32_t value, void *param)
{
	(void)irq;
	(void)param;
	uint32_t v = value & 0xFF;
	if (corrupt_in_left > 0) {
		corrupt_in_left--;
		corrupt_rng = corrupt_rng * 1103515245u + 12345u;
		uint32_t bad = v ^ (1u << ((corrupt_rng >> 16) % 8));
		printf("corrupt-in %llu %u %u\n", (unsigned long long)avr->cycle, v, bad);
		fflush(stdout);
		v = bad;
	}
	avr_raise_irq(uart_in_dst, v);
}

static void release_all(void)
{
	/* avr_reset() clears the PIN registers but not the IRQ values, and raising an IRQ to the value it
	 * already has does nothing: go through 0 so that the pin really reads released (1) again */
	level = 0xFF;
	for (int i = 0; i < 8; i++) {
		avr_raise_irq(pins[i], 0);
		avr_raise_irq(pins[i], 1);
	}
}

static int process_commands(void)
{
	static avr_cycle_count_t base;
	int quit = 0;
	int added = 0;
	pthread_mutex_lock(&qlock);
	cmd_t *c = qhead;
	qhead = qtail = NULL;
	atomic_store(&qcount, 0);
	pthread_mutex_unlock(&qlock);
	while (c) {
		cmd_t *nx = c->next;
		unsigned long long a = 0;
		unsigned d = 0, u = 0;
		int n = 0;
		if (sscanf(c->line, "base %llu", &a) == 1) {
			base = avr->cycle + a;
		} else if (sscanf(c->line, "ev %llu %u %u", &a, &d, &u) == 3) {
			schedule(base + a, (uint8_t)d, (uint8_t)u);
			added = 1;
		} else if (sscanf(c->line, "corrupt-in %d", &n) == 1) {
			corrupt_in_left += n;
		} else if (sscanf(c->line, "corrupt %d", &n) == 1) {
			corrupt_left += n;
		} else if (strncmp(c->line, "reset", 5) == 0) {
			avr_reset(avr);
			release_all();
			printf("reset %llu\n", (unsigned long long)avr->cycle);
		} else if (strncmp(c->line, "stats", 5) == 0) {
			printf("stats %llu %u %llu\n", (unsigned long long)avr->cycle, lights, buzz_toggles);
		} else if (strncmp(c->line, "now", 3) == 0) {
			printf("now %llu\n", (unsigned long long)avr->cycle);
		} else if (strncmp(c->line, "quit", 4) == 0) {
			quit = 1;
		} else {
			fprintf(stderr, "callbox_sim: bad command: %s", c->line);
		}
		free(c);
		c = nx;
	}
	if (added) {
		/* keep the not-yet-applied edges sorted; timers are re-registered from the earliest */
		memmove(edges, edges + next_edge, (n_edges - next_edge) * sizeof *edges);
		n_edges -= next_edge;
		next_edge = 0;
		qsort(edges, n_edges, sizeof *edges, cmp_edge);
		if (timer_armed)
			avr_cycle_timer_cancel(avr, edge_timer, NULL);
		avr_cycle_timer_register(avr, edges[0].when - avr->cycle, edge_timer, NULL);
		timer_armed = 1;
	}
	fflush(stdout);
	return quit;
}

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void keep_real_time(uint64_t wall0, avr_cycle_count_t cycle0)
{
	uint64_t sim_ns = (uint64_t)(avr->cycle - cycle0) * 125 / 2; /* 62.5 ns per cycle at 16 MHz */
	uint64_t wall_ns = mono_ns() - wall0;
	if (sim_ns > wall_ns + 200000) { /* more than 0.2 ms ahead */
		uint64_t d = sim_ns - wall_ns;
		struct timespec ts = {(time_t)(d / 1000000000ull), (long)(d % 1000000000ull)};
		nanosleep(&ts, NULL);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FIRMWARE.elf [EEPROM_SEED_HEX]\n", argv[0]);
		return 2;
	}
	elf_firmware_t fw;
	memset(&fw, 0, sizeof fw);
	if (elf_read_firmware(argv[1], &fw) != 0) {
		fprintf(stderr, "callbox_sim: cannot read %s\n", argv[1]);
		return 2;
	}
	strcpy(fw.mmcu, "atmega328p");
	fw.frequency = 16000000;
	avr = avr_make_mcu_by_name(fw.mmcu);
	if (!avr) {
		fprintf(stderr, "callbox_sim: no atmega328p core in libsimavr\n");
		return 2;
	}
	avr_init(avr);
	avr_load_firmware(avr, &fw);
	avr->log = 0;

	/* EEPROM boot counter: seeded so that each simulated box starts from a different count */
	uint32_t seed;
	if (argc > 2) {
		seed = (uint32_t)strtoul(argv[2], NULL, 16);
	} else {
		FILE *r = fopen("/dev/urandom", "rb");
		if (!r || fread(&seed, sizeof seed, 1, r) != 1) seed = (uint32_t)getpid();
		if (r) fclose(r);
	}
	uint8_t ee[4] = {(uint8_t)seed, (uint8_t)(seed >> 8), (uint8_t)(seed >> 16), (uint8_t)(seed >> 24)};
	avr_eeprom_desc_t desc = {.ee = ee, .offset = 0, .size = 4};
	avr_ioctl(avr, AVR_IOCTL_EEPROM_SET, &desc);

	for (int i = 0; i < 6; i++)
		pins[i] = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('D'), 2 + i);
	for (int i = 0; i < 2; i++)
		pins[6 + i] = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('C'), i);
	release_all();
	hook_outputs();

	/* uart_pty as simavr intends, then splice our corruption hook between the UART and the pty */
	uart_pty_init(avr, &pty);
	uart_pty_connect(&pty, '0');
	uint32_t flags = 0; /* binary data, and no usleep() when the firmware polls the status register */
	avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
	avr_irq_t *src = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT);
	avr_unconnect_irq(src, pty.irq + IRQ_UART_PTY_BYTE_IN);
	static const char *names[] = {"8<callbox_sim.uart"};
	my_uart_out = avr_alloc_irq(&avr->irq_pool, 0, 1, names);
	avr_connect_irq(src, my_uart_out);
	avr_irq_register_notify(my_uart_out, uart_out_hook, NULL);
	uart_in_dst = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
	avr_unconnect_irq(pty.irq + IRQ_UART_PTY_BYTE_OUT, uart_in_dst);
	static const char *names_in[] = {"8>callbox_sim.uart_in"};
	my_uart_in = avr_alloc_irq(&avr->irq_pool, 0, 1, names_in);
	avr_connect_irq(pty.irq + IRQ_UART_PTY_BYTE_OUT, my_uart_in);
	avr_irq_register_notify(my_uart_in, uart_in_hook, NULL);

	printf("ready %s %llu\n", pty.pty.slavename, (unsigned long long)avr->cycle);
	fflush(stdout);

	pthread_t th;
	pthread_create(&th, NULL, stdin_thread, NULL);

	/* A real chip runs at 16 MHz, never faster. simavr waits for the wall clock only while the chip sleeps:
	 * a firmware busy sending (it polls the UART and sleeps only when it has nothing to send, and resends
	 * unacknowledged presses every 20 ms) runs as fast as the host CPU allows, races seconds ahead of real
	 * time, and then simavr sleeps all that lead off in one go, deaf to the host and to our commands. So
	 * every 4096 steps the simulation waits until the wall clock has caught up with its cycle count. */
	uint64_t wall0 = mono_ns();
	avr_cycle_count_t cycle0 = avr->cycle;
	unsigned steps = 0;
	for (;;) {
		if ((++steps & 4095) == 0)
			keep_real_time(wall0, cycle0);
		int state = avr_run(avr);
		if (state == cpu_Done || state == cpu_Crashed) {
			fprintf(stderr, "callbox_sim: cpu stopped (state %d) at cycle %llu\n", state,
			        (unsigned long long)avr->cycle);
			break;
		}
		if (atomic_load(&qcount) && process_commands())
			break;
		if (atomic_load(&eof_seen) && !atomic_load(&qcount))
			break;
	}
	uart_pty_stop(&pty);
	return 0;
}
