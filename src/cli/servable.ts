/**
 * @module cli/servable
 * The modules `gatehouse serve` runs, known without loading them: the usage
 * text and the checks of the command line need no more.
 */

export const SERVABLE_MODULES = ['api', 'auth', 'hotel-booking', 'car-booking', 'ratelimit'] as const;

/** A module name `serve` knows. */
export type ServableModule = (typeof SERVABLE_MODULES)[number];

/** Whether `serve` can run a module of this name. */
export function isServable(name: string): name is ServableModule {
  return (SERVABLE_MODULES as readonly string[]).includes(name);
}

/** Whether `name` is a booking service, which keeps its bookings in a database. */
export function isBookingModule(name: string): name is 'hotel-booking' | 'car-booking' {
  return name === 'hotel-booking' || name === 'car-booking';
}
