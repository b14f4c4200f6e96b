// The domain moved to lib/domain.ts (the bottom layer); this re-export keeps code written before the move compiling.
export * from '../domain';
