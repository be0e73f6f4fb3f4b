/**
 * @module test/support/bookings
 * The demo bookings of config/bookings.yaml: their ids, a booking module
 * holding them, and the field names of each kind.
 */
import {
  createBookingModule,
  loadBookingDataSync,
  type BookingKind,
  type BookingModule,
  type BookingModuleOptions,
} from '../../src/bookings';
import { DEMO_CONFIG } from './config-folder';

/** The demo data, as config/bookings.yaml holds it. */
export const DEMO = {
  hotels: {
    auroraOslo: 'b1240207-0df8-456d-9ee3-752904b6062b',
    grandCanalVenice: 'af14ed08-a000-4064-b436-ebb6b009dbc7',
    lighthouseLisbon: '87dd94a1-45cb-4212-8861-4d5365bc1463',
    harbourOslo: 'adde63cf-2901-4f62-871e-7fdca6395110',
  },
  cars: {
    volvoOslo: '42ce126e-0425-4e2a-b036-86990751d66a',
    fiatVenice: 'ef4fa78e-1eff-4de2-bb0f-b5853513ae80',
    traficLisbon: 'a4b5a5ad-f696-4db4-9cdb-f96a05f28213',
  },
  alice: {
    hotel: 'b0db9db1-e959-46d6-b29b-0696485cc76a',
    cancelledHotel: '8450483a-146e-4a75-b10a-9875217bb9be',
    car: 'cb717b09-9664-4626-aaf5-f22be62d5702',
  },
  bob: {
    hotel: 'dcc2eae2-d010-4a80-996b-4ef47cbea644',
    car: 'b812e811-b972-470a-89a2-43672f08f2f0',
  },
} as const;

/** A UUID that names nothing in the demo data. */
export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** A booking module of `kind` holding the demo data of config/bookings.yaml. */
export function demoModule(kind: BookingKind, options: Omit<BookingModuleOptions, 'kind'> = {}): BookingModule {
  return createBookingModule({ data: loadBookingDataSync(DEMO_CONFIG), ...options, kind });
}

/** Field names per kind, for tests that run against both. */
export const KIND_CASES = [
  {
    kind: 'hotel' as const,
    base: '/v1/hotels',
    itemField: 'hotel_id',
    startField: 'check_in',
    lengthField: 'nights',
    item: DEMO.hotels.auroraOslo,
    otherItem: DEMO.hotels.grandCanalVenice,
    catalogueKey: 'hotels',
    bookingsKey: 'hotel_bookings',
    /** `item` as a line of bookings.yaml. */
    catalogueEntry: `{id: ${DEMO.hotels.auroraOslo}, name: Hotel Aurora, city: Oslo, stars: 4}`,
    alice: DEMO.alice.hotel,
    bob: DEMO.bob.hotel,
    catalogueSize: 4,
  },
  {
    kind: 'car' as const,
    base: '/v1/cars',
    itemField: 'car_id',
    startField: 'pick_up',
    lengthField: 'days',
    item: DEMO.cars.volvoOslo,
    otherItem: DEMO.cars.fiatVenice,
    catalogueKey: 'cars',
    bookingsKey: 'car_bookings',
    catalogueEntry: `{id: ${DEMO.cars.volvoOslo}, model: Volvo V60, city: Oslo, seats: 5}`,
    alice: DEMO.alice.car,
    bob: DEMO.bob.car,
    catalogueSize: 3,
  },
];
