/** The petstore's resources: Pet, Category, Tag. */
export interface Category {
  id: number;
  name: string;
}

export interface Tag {
  id: number;
  name: string;
}

export type PetStatus = 'available' | 'pending' | 'sold';

export interface Pet {
  id: number;
  name: string;
  photoUrls: string[];
  category: Category;
  tags: Tag[];
  status: PetStatus;
}

const DOGS: Category = { id: 1, name: 'Dogs' };
const CATS: Category = { id: 2, name: 'Cats' };

/** A small in-memory store, seeded at start. */
export class PetStore {
  private readonly pets = new Map<number, Pet>();

  constructor(seed: Pet[] = SEED) {
    for (const pet of seed) this.pets.set(pet.id, pet);
  }

  get(id: number): Pet | undefined {
    return this.pets.get(id);
  }
}

export const SEED: Pet[] = [
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
  {
    id: 3,
    name: 'Bella',
    photoUrls: [],
    category: DOGS,
    tags: [],
    status: 'sold',
  },
];
