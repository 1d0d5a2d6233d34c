const DOGS = { id: 1, name: 'Dogs' };
const CATS = { id: 2, name: 'Cats' };

const SEED = [
  {
    id: 1,
    name: 'Rex',
    photoUrls: ['https://example.com/photos/rex-1.jpg'],
    category: DOGS,
    tags: [{ id: 1, name: 'friendly' }],
    status: 'available',
  },
  {
    id: 2,
    name: 'Tom',
    photoUrls: ['https://example.com/photos/tom-1.jpg', 'https://example.com/photos/tom-2.jpg'],
    category: CATS,
    tags: [
      { id: 2, name: 'indoor' },
      { id: 3, name: 'quiet' },
    ],
    status: 'pending',
  },
  { id: 3, name: 'Bella', photoUrls: [], category: DOGS, tags: [], status: 'sold' },
];

export type Pet = (typeof SEED)[number];

export const PETS: ReadonlyMap<number, Pet> = new Map(SEED.map((pet) => [pet.id, pet]));
