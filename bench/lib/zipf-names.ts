// Names drawn as a national registry has them: a few very common and a long
// tail. Surnames and given names are ranked, the commonest Czech ones first,
// then Czech-like names made of stems and endings, and drawn with Zipf-like
// weights 1 / (rank + offset). With these offsets the commonest surname
// (Novák) is about 1 record in 80 and the commonest given name (Jan) about 1
// in 20: a little denser than the Czech population (0.7 % and 3 %), so a
// common name's answers are at least as large as in a real file.
import type { NameDraw } from './generate.ts';

const COMMON_SURNAMES = [
  'Novák',
  'Svoboda',
  'Novotný',
  'Dvořák',
  'Černý',
  'Procházka',
  'Kučera',
  'Veselý',
  'Horák',
  'Němec',
  'Marek',
  'Pospíšil',
  'Pokorný',
  'Hájek',
  'Král',
  'Jelínek',
  'Růžička',
  'Beneš',
  'Fiala',
  'Sedláček',
  'Doležal',
  'Zeman',
  'Kolář',
  'Navrátil',
  'Čermák',
  'Vaněk',
  'Urban',
  'Blažek',
  'Kříž',
  'Kovář',
];
const SURNAME_STEMS = ['Bart', 'Bíl', 'Brz', 'Cíb', 'Dud', 'Hol', 'Hrub', 'Jan', 'Kop', 'Kos', 'Krej', 'Lukeš', 'Mach', 'Mal', 'Or'];
const SURNAME_ENDINGS = ['ák', 'ek', 'íček', 'ovský', 'ný', 'ec', 'ka', 'ář', 'oň', 'uš', 'ík', 'al'];
const COMMON_GIVEN = [
  'Jan',
  'Jiří',
  'Petr',
  'Josef',
  'Pavel',
  'Martin',
  'Tomáš',
  'Jaroslav',
  'Miroslav',
  'Zdeněk',
  'Václav',
  'Michal',
  'František',
  'Marie',
  'Jana',
  'Eva',
  'Hana',
  'Anna',
  'Lenka',
  'Kateřina',
  'Věra',
  'Lucie',
  'Alena',
  'Ludmila',
];
const GIVEN_TAIL = ['Bohu', 'Dobro', 'Ludo', 'Mile', 'Radi', 'Slavo', 'Vlasti', 'Zbyh', 'Bole', 'Čest'];
const GIVEN_ENDINGS = ['mil', 'slav', 'mír', 'mila', 'slava', 'míra', 'n', 'na'];

/** Czech-like surnames past the common ones: stems, a second stem, an ending. */
function surnames(count: number): string[] {
  const names = [...COMMON_SURNAMES];
  for (const first of SURNAME_STEMS)
    for (const second of SURNAME_STEMS)
      for (const ending of SURNAME_ENDINGS) {
        if (names.length >= count) return names;
        names.push(`${first}${second.toLowerCase()}${ending}`);
      }
  return names;
}

function givenNames(count: number): string[] {
  const names = [...COMMON_GIVEN];
  for (const stem of GIVEN_TAIL)
    for (const ending of GIVEN_ENDINGS) {
      if (names.length >= count) return names;
      names.push(`${stem}${ending}`);
    }
  return names;
}

/** A draw over `names` by rank with weights 1 / (rank + offset): one uniform number, a binary search of the cumulative weights. */
function zipfDraw(names: readonly string[], offset: number): (random: () => number) => string {
  const cumulative = new Float64Array(names.length);
  let total = 0;
  for (let rank = 1; rank <= names.length; rank += 1) {
    total += 1 / (rank + offset);
    cumulative[rank - 1] = total;
  }
  return (random) => {
    const target = random() * total;
    let low = 0;
    let high = names.length - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (cumulative[middle]! < target) low = middle + 1;
      else high = middle;
    }
    return names[low]!;
  };
}

/** Surnames over 2,700 ranks and given names over 100, Zipf-like. */
export const ZIPF_NAMES: NameDraw = {
  surname: zipfDraw(surnames(2700), 15),
  given: zipfDraw(givenNames(100), 5),
};
